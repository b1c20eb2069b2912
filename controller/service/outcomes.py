"""Running a job with the engine and recording its outcome as ``plan.status`` and a commit.

The engine never touches git: :meth:`Outcomes.execute` checks that the file it will read
still hashes to what was approved, runs it (stopping on an abort request), then commits the
``execution:`` block and EXECUTION_LOG.md, retrying when the branch moves meanwhile.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller import fsutil
from controller.errors import PlangateError, UnsafePath
from controller.git import conversion
from controller.git.history import LOG_NAME
from controller.git.records import RUN_START
from controller.plan import plans, yamlio
from controller.service.committing import Committing, aborted_by
from controller.service.core import (
    MAX_PASSES,
    Job,
    _job_data,
    _Moved,
    _stat_key,
    _Wait,
    holds_another,
)

STATUS = ("plan", "status")
_OUTCOME_STATUS = {
    "completed": ("completed", "complete"),
    "failed": ("failed", "fail"),
    "awaiting_approval": ("awaiting_approval", "await-approval"),
    "aborted": ("aborted", "abort"),
    "stopped": ("executing", "checkpoint"),
}


@dataclass(eq=False)
class _Finished:
    """A run that ended, waiting for its outcome commit."""

    job: Job
    outcome: Any
    #: The plan text the engine ran (the approved bytes, as started).
    ran: str | None = None


#: How long a step waits, before it starts, for a pass that holds the controller while the
#: branch has moved (the pass scans the new commits and hands over any abort).
ABORT_WAIT = 2.0


class Outcomes(Committing):
    """Runs jobs (safe from worker threads) and commits what they did."""

    def execute(self, job: Job, stop_requested: Callable[[], bool] = lambda: False) -> None:
        """Run the job with the engine and commit the outcome; safe from worker threads.

        The outcome may be left to the thread holding the controller (a pass, or another
        worker committing its own): it commits every outcome waiting, so this thread is free
        for the next plan at once. The plan counts as running until its outcome is
        committed."""
        from controller.execution.executor import Engine, RunOutcome

        with self._jobs_lock:
            if job.plan_id in self._running:
                return
            if not self.job_is_current(job):
                # round 111 (abort-then-continued): a job handed out before its run's outcome
                # was committed (two passes handed the same run out, one aborted it): the run
                # is over, and nothing of it runs again
                self.log.warning("job_stale", plan=job.plan_id, hash=job.plan_hash)
                return
            self._running.add(job.plan_id)
        queued = False
        try:
            if job.plan_id in self.holds:  # a rewrite erased its start meanwhile
                self.log.error("run_held", plan=job.plan_id)
                return
            approved = self._approved_plan(job)
            if approved is None:
                return
            # the records' marks in the form their checkout gives back (round 80); in the
            # shared working tree the run writes nothing: the commits write its files, as
            # committed (round 81, ca_clean). A run folder of the state directory is its own.
            root = self._tree_root(job)
            engine = Engine(self.config, state_dir=self.state.path, root=root,
                            gives_back=self._gives_back(job), on_disk=root is None)  # fmt: skip
            try:
                outcome = engine.run(
                    job.plan_file,
                    loaded=approved,  # the very text whose hash was checked: no second read
                    plan_id=job.plan_id,
                    approval=job.approval,
                    gate_approved=job.gate_approved,
                    resume=job.resume,
                    abort_requested=self._abort_check(job),
                    stop_requested=stop_requested,
                    journal_expected=True,  # Starting._start wrote its begin record
                    # a gate, ask or resume approval goes on from a run the controller paused
                    # or failed (round 45); after a loss, from its own record (round 52)
                    continued=job.continued,
                    record=self._record_source(job),
                )
            except PlangateError as exc:
                outcome = RunOutcome("failed", exc, None)
            with self._jobs_lock:
                self._finished.append(_Finished(job, outcome, approved.text))
            queued = True
        finally:
            if not queued:
                self._settle(job.plan_id)
        self.commit_finished()

    def job_is_current(self, job: Job) -> bool:
        """Is ``job`` the run its plan's job row describes now? The row is written before
        the start commit is published and cleared once the run's outcome (complete, fail,
        abort) is committed, before the run counts as ended (:meth:`_settle`): a job without
        its row, or whose row is another run's (another version, gate or resume), is one a
        pass handed out before that outcome landed, and is never run (round 111)."""
        row = self.index.jobs().get(job.plan_id)
        if row is None or row.get("plan_hash") != job.plan_hash:
            return False
        return row.get("gate_approved") == job.gate_approved and bool(row.get("resume")) == (
            job.resume
        )

    def _gives_back(self, job: Job) -> Callable[[Mapping[str, bytes]], bool]:
        """Would git give a record of the run back from its checkout (round 80: else its
        marks are written in ASCII)? By the conversions the pass asked at its start; a job
        taken up otherwise (a restart) asks git when the run renders one."""
        known = job.conversions
        if known is None:
            return self.repo.gives_back
        return lambda files: all(
            conversion.gives_back(data, known.get(path, conversion.NONE), path)
            for path, data in files.items()
        )

    def _record_source(self, job: Job) -> Callable[[str | None], tuple[Any, str]]:
        """What a continued run whose journal was lost goes on from (round 52): the
        ``execution:`` block of the controller's own last commit of the plan that wrote it,
        before the run's start commit (``start``, from the journal's begin record), and
        where it was read; (None, why) when there is none. Asked by the engine only after a
        loss: a run with its journal never reads git for it."""
        file = f"{job.plan_id}/{job.plan_file.name}"

        def read(start: str | None) -> tuple[Any, str]:
            if not start:
                return None, "the journal names no start commit"
            found = self.own_execution_record(file, start)
            if found is None and job.plan_id in self.holds:
                return None, (
                    "E_HISTORY_REWRITTEN: the controller's later commits of the plan (by its "
                    "record) are gone from the branch; its last record there is not its last"
                )
            if found is None:
                return None, (
                    f"no commit of the controller's (by its record) wrote the execution: "
                    f"block of {file} before the start {start[:12]}"
                )
            if found.blocks is None:
                return None, f"{file} cannot be read at the controller's {found.commit[:12]}"
            later = [sha[:12] for sha in found.later if sha != start]
            after = f"; the file's commits after it: {', '.join(later)}" if later else ""
            return found.blocks.get("execution"), f"its commit {found.commit[:12]}{after}"

        return read

    def _tree_root(self, job: Job) -> Path | None:
        """The working tree a run's plan files lie in, which an agent may write (local mode;
        a remote run's folder is the controller's own, in its state directory, and so is a
        local run's whose plan left the branch: Starting._left_job)."""
        if self.config.remote is not None or self._in_run_dir(job):
            return None
        return self.repo.path

    def _in_run_dir(self, job: Job) -> bool:
        """Does the job run from a run folder of the state directory?"""
        return job.plan_file.is_relative_to(self.state.run_dir(job.plan_id))

    def _settle(self, plan_id: str) -> None:
        """The run is over and its outcome committed (or given up): no longer running."""
        with self._jobs_lock:
            self._running.discard(plan_id)
            self._abort.discard(plan_id)
        self._job_ended(plan_id)

    def _approved_plan(self, job: Job) -> plans.LoadedPlan | None:
        """The plan file, read once, if it still hashes to what was approved: the engine runs
        exactly these bytes (a file rewritten after this read changes nothing). In local mode
        anyone with the working tree can rewrite PLAN.yml (and its frozen.hash) after the
        start commit; such a plan waits, untouched, instead of running unapproved content."""
        loaded: plans.LoadedPlan | None = None
        try:
            loaded = self._run_file(job.plan_file, self._tree_root(job), job.plan_hash)
        except UnsafePath as exc:  # a link or special file on the way: never followed
            with self._lock:
                self._refused_files[job.plan_id] = _stat_key(job.plan_file)
                self._wait(job.plan_id, f"{exc.code}: {exc.message}")
            return None
        except (OSError, UnicodeDecodeError, PlangateError) as exc:
            found: str | None = f"unreadable ({exc})"
        else:
            found = loaded.hash
        if found == job.plan_hash and loaded is not None:
            return loaded
        with self._lock:
            self._refused_files[job.plan_id] = _stat_key(job.plan_file)
            self._wait(
                job.plan_id,
                f"E_PLAN_HASH_MISMATCH: {job.plan_file} hashes to {found}, but "
                f"{job.plan_hash} was approved; restore the committed file to run it",
            )
        return None

    def _run_file(self, path: Path, root: Path | None, approved: str) -> plans.LoadedPlan:
        """The plan file ``path`` read and validated (never through a link); in the working
        tree (``root``), when its bytes do not hash to ``approved``, as git would store them
        (round 76: a ``working-tree-encoding`` plan, clean to ``git status``, read as its
        working-tree bytes hashed to another plan and never ran). The common case reads the
        file once and asks git nothing."""
        raw = fsutil.read_regular(path, root=root)
        try:
            loaded = plans.validate_text(raw.decode("utf-8"), path, self.config)
        except (UnicodeDecodeError, PlangateError):
            if root is None:
                raise
        else:
            if loaded.hash == approved or root is None:
                return loaded
        stored = self.repo.as_committed(path.relative_to(root).as_posix(), raw)
        return plans.validate_text(stored.decode("utf-8"), path, self.config)

    def _abort_check(self, job: Job) -> Callable[[], bool]:
        # the branch head last looked at (at first: what the index was last brought up to)
        seen: list[str | None] = [None]

        def abort_requested() -> bool:
            """Before every action: has the branch asked to abort? Costs a read of the ref
            file while the branch stays put (no time-based skipping: with `run --once` no
            pass runs meanwhile, and an abort committed during action 1 must stop action 2)."""
            if job.plan_id in self._abort or job.plan_id in self.holds:
                return True  # held: a rewrite erased its history; nothing more of it runs
            if seen[0] is None:  # first look: the index's state up to its last scan
                state = self.index.plans.get(job.plan_id)
                if state is not None and (state.abort_requested or state.status == "aborted"):
                    return True  # asked, or recorded: nothing more of an aborted plan runs
                seen[0] = self.index.scanned_to
            try:
                if self.config.remote is not None:
                    self._fetch_due()  # reads the remote when due: the local ref follows it
                head = self.head()
            except PlangateError:
                return False
            if head == seen[0]:
                return False
            if self._ours_since(seen[0], head):  # only the controller's own commits since
                seen[0] = head
                return False
            found = self._abort_at_head(job)
            if found is None:
                return False  # a pass holds the controller: it hands over any abort itself
            seen[0] = head
            return found or job.plan_id in self.holds  # the scan may have seen a rewrite

        return abort_requested

    def _ours_since(self, since: str | None, head: str) -> bool:
        """Is every first-parent commit after ``since`` up to ``head`` one this controller
        made (by record)? Then no abort can be among them, and a step need not wait for the
        pass that holds the controller (a burst's outcome commits move the branch all the
        time). Read in-process, at most 64 commits; False when unsure. A commit this process
        made (``_made``, noted with the parent it was written on) is not read again: each
        action of each running plan walked the same commits through ``cat-file``."""
        if since is None:
            return False
        commit = head
        for _ in range(64):
            if commit == since:
                return True
            if commit not in self.own_commits:
                return False
            made = self._made.get(commit)  # made by this process: its one parent, as written
            if made is not None:
                commit = made[0]
                continue
            try:
                header = self.repo.blob(commit).split(b"\n\n", 1)[0]
            except PlangateError:
                return False
            parents = [line[7:] for line in header.split(b"\n") if line.startswith(b"parent ")]
            if not parents:
                return False
            commit = parents[0].decode("ascii", "replace")
        return False

    def _fetch_due(self) -> bool:
        """Remote mode: read the remote again when ``remote.poll_interval`` has passed since
        the last read by anyone (an abort or a rewrite pushed while ``run --once`` runs must
        stop the next action, or a plan queued behind it, as the daemon's passes do; round
        7). False when not due or a pass holds the controller (it fetches itself)."""
        assert self.config.remote is not None
        if time.monotonic() - self.fetched_at < self.config.remote.poll_interval:
            return False
        if not self._lock.acquire(blocking=False):
            return False
        try:
            self._head = self._sync()
        except (PlangateError, _Moved):
            return False
        finally:
            self._lock.release()
        return True

    def _abort_at_head(self, job: Job) -> bool | None:
        """Has a commit on the branch asked to abort this plan (as the history index reads it:
        an allowed approver or author set ``aborted``)? New commits are applied to the index,
        so the check costs what changed, never a read or parse of the plan (a 1,000-action
        plan took 0.7 s to parse, once a second). Skipped while a pass holds the controller:
        the pass itself hands an abort request to the running plan (None: not looked). A pass
        that holds the controller is waited for a little first: an abort committed by the
        step just ended (a check tool, a failing call) wakes a pass at once, and the next step
        must not start before that pass has looked (round 11)."""
        if not self._lock.acquire(timeout=ABORT_WAIT):
            return None
        try:
            head = self.head()
            if self.index.meta("last_commit") != head:
                self.index.scan(self.repo, head)
            state = self.index.plans.get(job.plan_id)
            return state is not None and state.abort_requested
        except PlangateError:
            return None  # the next check, or the next pass, tries again
        finally:
            self._lock.release()

    def commit_finished(self) -> None:
        """Commit the outcomes waiting (group commit: whoever holds the controller commits
        every outcome waiting, in one commit). A thread that finds the controller busy leaves
        its outcome there: the holder looks again after letting go (:meth:`reconcile`), and
        a pass takes the outcomes into its own commits (:meth:`_join_finished`)."""
        while True:
            with self._jobs_lock:
                if not self._finished:
                    return
                tried = {id(item) for item in self._finished}
            if not self._lock.acquire(blocking=False):
                return
            try:
                self._commit_waiting()
            finally:
                self._lock.release()
            with self._jobs_lock:  # only outcomes that came back (they wait, said): none new
                if {id(item) for item in self._finished} <= tried:
                    return  # round 33: a blocked outcome put back at once spun here for good

    def _commit_waiting(self) -> None:
        for _ in range(MAX_PASSES):
            with self._jobs_lock:
                batch, self._finished = self._finished, []
            if not batch:
                return
            try:
                self._commit_outcomes(batch)
                return
            except _Moved:
                self._sync()  # the outcomes went back to the queue (on_drop)
        with self._jobs_lock:
            left, self._finished = self._finished, []
        # The branch kept moving: the job stays ours, and the next pass runs it again; the
        # journal makes that rerun report the same outcome without acting again.
        for item in left:
            self._not_committed(item)

    def _not_committed(self, item: _Finished) -> None:
        self.log.warning("outcome_not_committed", plan=item.job.plan_id, status=item.outcome.status)
        self._settle(item.job.plan_id)

    def _commit_outcomes(self, batch: list[_Finished]) -> None:
        """One commit for every outcome in ``batch`` that can be committed now."""
        self._head = self._sync()
        self.index.scan(self.repo, self._head)
        self._batching(first_alone=False, least=2)
        try:
            self._stage_outcomes(batch)
            self._flush(stop=True)
        finally:
            self._drop_batch()

    def _join_finished(self) -> int:
        """The outcomes waiting join the batch being flushed (a pass's or a worker's): one
        commit for them and the pass's events."""
        with self._jobs_lock:
            items, self._finished = self._finished, []
        if items and self._batch is not None:
            self._batch.first_alone = False  # they wait for this flush, never commit alone
        self._stage_outcomes(items)
        return len(items)

    def _stage_outcomes(self, batch: list[_Finished]) -> None:
        """Add each outcome to the batch: when its commit is made, the run is settled; when
        the batch is dropped, the outcome waits again for the next commit."""
        for index, item in enumerate(batch):
            try:
                self._stage_outcome(item)
            except _Wait as wait:
                self._wait(item.job.plan_id, str(wait))
                self._settle(item.job.plan_id)
            except PlangateError as exc:  # this plan's problem: a pass must not fail with it
                self.log.warning("outcome_failed", plan=item.job.plan_id, error=str(exc))
                self._not_committed(item)
            except BaseException:
                with self._jobs_lock:  # not staged: they wait for the next commit
                    self._finished[:0] = batch[index:]
                raise

    def _stage_outcome(self, item: _Finished) -> None:
        if item.job.plan_id in self.holds:
            # a rewrite erased this run's start: an outcome commit would record a run the
            # branch no longer shows; the journal keeps it, the hold says why (round 7)
            self.log.error("outcome_held", plan=item.job.plan_id, status=item.outcome.status)
            self._settle(item.job.plan_id)
            return
        start = (self.index.jobs().get(item.job.plan_id) or {}).get("start")
        head = self._head or self.head()
        if isinstance(start, str) and self._drop_if_taken_over(item.job.plan_id, start, head):
            # round 51: another controller (a rebuilt host) recorded this run's outcome, or
            # moved the plan on, while this one ran it: nothing of this run is committed
            self.log.warning("outcome_dropped", plan=item.job.plan_id, status=item.outcome.status)
            self._settle(item.job.plan_id)
            return
        status, event = _OUTCOME_STATUS.get(item.outcome.status, ("failed", "fail"))
        body = str(item.outcome.error) if item.outcome.error is not None else ""

        def done(_sha: str) -> None:
            self._after_outcome(item.job, item.outcome, status)
            self._settle(item.job.plan_id)

        def dropped(retry: bool) -> None:
            if retry:
                with self._jobs_lock:
                    self._finished.append(item)
            else:
                self._not_committed(item)

        sha = self._commit_outcome(
            item.job,
            status,
            event,
            body,
            item.outcome,
            ran=item.ran,
            after=done,
            on_drop=dropped,
        )
        if sha is None:  # nothing to commit: done all the same
            done("")

    def _commit_outcome(
        self,
        job: Job,
        status: str,
        event: str,
        body: str,
        outcome: Any = None,
        *,
        ran: str | None = None,
        after: Callable[[str], None] | None = None,
        on_drop: Callable[[bool], None] | None = None,
    ) -> str | None:
        head = self._head
        state = self.index.plans.get(job.plan_id)
        if state is None and ran is None:
            return None
        # a plan deleted from the branch while it ran (or before a restart took its run up
        # again, round 30) still gets its outcome recorded: the file is written back where
        # the run started
        started = f"{job.plan_id}/{Path(job.plan_file).name}"
        file = state.file if state is not None else started
        # Only bytes the controller produced: the engine's own execution block and log text,
        # never the working-tree files, which an agent sharing the tree may have rewritten or
        # swapped for a symlink since the engine wrote them.
        execution = getattr(outcome, "execution", None)
        log_text = getattr(outcome, "log", None)
        error = getattr(outcome, "error", None)  # the body: its author's quotes as written
        # Round 42: the run's folder was removed and another plan put at its path since it
        # started: the outcome commit records the run (subject, trailers, the run's log)
        # without writing the started plan back over the new one, which is judged on its own.
        another = holds_another(state, job.plan_hash) or self._holds_source(job.plan_id, head)
        if self.config.remote is None and state is not None and not another:
            self._check_uncommitted(state, head, execution)

        def mutate(text: str) -> str:
            if execution is None:
                # round 95 (forgedtail): the engine made no record (it failed before one):
                # the block is the controller's own last record of it (none: removed),
                # never what an agent left in the file under the controller's seal
                text = self._from_own_record(file, text, ("execution",))
            text = self._frozen_as_started(file, text, job.plan_id)
            blocks = {"execution": execution} if execution is not None else {}
            edited = yamlio.edit(yamlio.read_yaml(text, file), blocks, {STATUS: status})
            # plan.status is the controller's line: no comment of someone else's rides on it
            return yamlio.without_comment_after(edited, STATUS, file)

        # The outcome stamps only content that ran: when the branch's version of the plan no
        # longer hashes to what was approved (someone committed an edit, or an empty or broken
        # file, while it ran), or is another file than the one started (PLAN.yml renamed to
        # PLAN.yaml: its blocks are no longer the run's), the outcome is written onto the
        # text the engine ran instead.
        other = state is None or state.hash != job.plan_hash or state.file != started
        base = ran if ran is not None and other else None

        extra = {f"{job.plan_id}/{LOG_NAME}": log_text.encode()} if log_text is not None else {}
        if log_text is None and not another:
            extra = self._own_log(file, f"{job.plan_id}/{LOG_NAME}")
        trailers = aborted_by(state) if status == "aborted" and state is not None else None
        if another:
            start = str((self.index.jobs().get(job.plan_id) or {}).get("start") or "")
            trailers = {**(trailers or {}), RUN_START: start or "unknown"}
            base = ran
            if not extra:  # the commit must touch the plan's folder: audit and scans read it
                extra = {f"{job.plan_id}/{LOG_NAME}": f"# {job.plan_id}\n\n{status}\n".encode()}
        return self._commit_plan(
            file,
            event,
            mutate,
            job.plan_hash,
            body,
            approved_by=str(job.approval.get("by") or "") or None,
            approval_commit=str(job.approval.get("commit") or "") or None,
            trailers=trailers,
            write_plan=not another,
            extra=extra,
            base=base,
            after=after,
            on_drop=on_drop,
            quotes=error.quoted() if isinstance(error, PlangateError) else (),
        )

    def _frozen_as_started(self, file: str, text: str, plan_id: str) -> str:
        """``text`` with its ``frozen:`` block as the run's start commit (the controller's own)
        wrote it (round 95: its unhashed facts, or its hash, rewritten by an agent since are
        never carried in the outcome commit); unchanged when the branch holds the file as
        this process last wrote it, or the start cannot be read."""
        start = (self.index.jobs().get(plan_id) or {}).get("start")
        if not isinstance(start, str) or not start or self._own_record_unchanged(file):
            return text
        started = self._git_or_none("show", f"{start}:{file}")
        if started is None:
            return text
        try:
            was = yamlio.read_yaml(started, file).data
            now = yamlio.read_yaml(text, file).data
            block = was.get("frozen") if isinstance(was, dict) else None
            if not isinstance(block, dict) or not isinstance(now, dict):
                return text
            if now.get("frozen") == block:
                return text
            return yamlio.set_blocks(text, {"frozen": block}, file)
        except PlangateError:
            return text

    def _own_log(self, file: str, log_file: str) -> dict[str, bytes | None]:
        """The run's log as an outcome commit without the engine's rendering of it must write
        it (round 95, forgedtail): as the controller's own last commit of it in the plan's
        life wrote it, or removed where it made none; nothing when the branch holds just
        that. Never the bytes an agent committed (a forged log, a link, a folder) under the
        controller's seal."""
        from controller.git.ownrecord import last_own, life_of, written
        from controller.service.statedir import is_own_commit

        head = self._head or self.head()
        git = self._git_or_none
        is_own = is_own_commit(self.config, self.own_commits)
        log = life_of(git, head, file, is_own).log
        found = last_own(log, is_own)
        record = next((r for r in log if found is not None and r.sha == found[0]), None)
        own = None if record is None else written(git, record, log_file)
        tree = git("ls-tree", head, "--", log_file)
        if own is None:
            return {log_file: None} if tree else {}
        regular = tree is not None and tree.split()[:2] == ["100644", "blob"]
        if regular and git("show", f"{head}:{log_file}") == own:
            return {}
        return {log_file: own.encode("utf-8", "surrogateescape")}

    def _holds_source(self, plan_id: str, head: str | None) -> bool:
        """Does the branch hold, at a run's path, a plan source and no PLAN.yml/PLAN.yaml
        (round 44: the folder removed and a new plan written there as ``PLAN.json``,
        ``PLAN.toon`` or ``PLAN.md``)? Another plan, as :func:`holds_another` reads one in
        a plan file: a PLAN.yml written beside it would make it a note, never converted."""
        if not head:
            return False
        return plan_id in self._sources.committed(self.repo, head)

    def _after_outcome(self, job: Job, outcome: Any, status: str) -> None:
        self.log.info("plan_outcome", plan=job.plan_id, hash=job.plan_hash, status=outcome.status)
        if outcome.status == "awaiting_approval":
            self.index.set_job(job.plan_id, {**_job_data(job), "paused_gate": outcome.action})
        elif outcome.status != "stopped":
            self.index.set_job(job.plan_id, None)
            if self.config.remote is not None or self._in_run_dir(job):
                shutil.rmtree(self.state.run_dir(job.plan_id), ignore_errors=True)
