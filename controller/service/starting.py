"""Starting runs: the start commit of an approved plan, and the jobs this controller owns.

A start is recorded in the history index before it is published (a crash must not orphan
the run) and handed to the daemon's worker pool as soon as it is on the branch; after a
restart, the plans this controller started and that are still ``executing`` become jobs again.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

from controller.approval import approvals, verdicts
from controller.errors import GitError, PlangateError
from controller.git.gitrepo import CommitRecord
from controller.git.history import LOG_NAME, PlanState
from controller.git.ownrecord import Recorded
from controller.git.planstate import unsafe
from controller.git.records import CLOSES_START
from controller.plan import plans
from controller.plan.plans import PLAN_FILES
from controller.service.committing import RUN_EVENTS, Committing, _set_approval
from controller.service.core import (
    MERGED,
    OUTCOME_EVENTS,
    Job,
    _events,
    _job_data,
    _job_of,
    _Moved,
    _stat_key,
    _Wait,
    iso,
)

#: The controller's events that end a run (or pause it at a gate): its outcome commits.
ENDINGS = frozenset({"complete", "fail", "abort", "await-approval"})
#: How often a pass tries to claim a run another process made while the branch moves.
MAX_CLAIMS = 5


class Starting(Committing):
    """Publishes start commits and knows which jobs are this controller's."""

    def _start(
        self,
        state: PlanState,
        request: approvals.ApprovalRequest,
        decision: approvals.Decision,
        record: dict[str, Any],
    ) -> Job | None:
        expected = request.current_hash
        gated = request.kind is approvals.Transition.GATE
        previous = self.index.jobs().get(state.plan_id, {})
        gate = self._paused_at(previous, expected) if gated else None
        # the index lost the pause (round 45): the controller's own record of it (round 52:
        # never the branch's execution: block, which anyone can commit an edit of)
        own = self._own_pause(state) if gated and gate is None else None

        def mutate(text: str) -> str | None:
            facts = plans.parse_text(text, Path(state.file), self.config)  # status and hash
            if facts.status != "approved" or facts.hash != expected:
                return None  # changed meanwhile: the next pass decides again
            if gated and job.gate_approved is None:
                # the pause the controller's record shows is the one this approval answers,
                # when the branch's block is that record (else it answers none: with the
                # journal, the run pauses there again, nothing run; without, in doubt)
                job.gate_approved = _committed_gate(facts, own)
            # claimed now, not when the (maybe batched) commit lands: a twin decided
            # later in this pass is already executed (SPEC §15, at most once)
            verdicts.claim_start(self._claims, request, state.plan_id)
            return _set_approval(record, "executing")(text)

        plan_file = self._plan_path(state)
        job = Job(
            state.plan_id,
            plan_file,
            expected or "",
            record,
            gate_approved=gate,
            resume=request.kind is approvals.Transition.RESUME,
            # a run the controller paused or failed goes on, never starts over (round 52:
            # an ask answered after a state loss ran action 1 again)
            continued=gated or request.kind is approvals.Transition.RESUME,
            # within the pass's one question of its files' attributes (round 80)
            conversions=self.repo.record_conversions([state.file, f"{state.plan_id}/{LOG_NAME}"]),
        )

        started: list[str] = []

        def journal_begin(sha: str) -> None:
            """Before the branch moves to the start commit: the journal knows the run
            started (if it goes missing, nothing runs twice), and a crash right after the
            move still finds the journal (round 28: a kill between the move and this record
            read as a lost journal, E_ACTION_IN_DOUBT for a run that never began). A begin
            for a commit that never lands is harmless: the journal is only read once a start
            commit is on the branch."""
            from controller.execution.executor import begin

            first = request.kind is approvals.Transition.APPROVE
            begin(self.state.path, state.plan_id, expected or "", sha, first=first)
            # the job too (round 29: killed right after the move, with no job row the run was
            # an orphan to adopt from the committed file, which an agent's commit of the stale
            # working tree had replaced: the plan stayed executing for good). A job whose
            # commit never lands is dropped when seen (_job_for: not published).
            self.index.set_job(state.plan_id, {**_job_data(job), "start": sha})

        def remember(sha: str) -> None:  # before publishing: a crash must not orphan the run
            started.append(sha)

        #: an approval runs its frozen hash at most once (SPEC §15): recorded as executed
        once = expected if request.kind is approvals.Transition.APPROVE and expected else None
        remote = self.config.remote is not None

        def publish() -> None:  # on the branch, and the file the engine reads is in place
            if once:  # local mode: recorded durably with its batch (Committing._commit_entries)
                self.executed[once] = {"plan": state.plan_id, "start": started[-1]}
                if remote:
                    self.state.record_executed(once, state.plan_id, started[-1])
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
            else:
                self._started.append(job)  # returned by the pass (_take_started)

        def remote_publish(sha: str) -> None:  # pushed: the run folder, then the worker
            self._prepare_run_dir(state, sha)
            publish()

        self._record_policy()  # a no-op unless the config changed during this pass
        self._commit_plan(
            state.file,
            "start",
            mutate,
            expected,
            "",
            approved_by=decision.approver,
            approval_commit=request.commit,
            trailers={"Policy-Hash": self.policy_in_force()[1]},
            on_commit=remember,
            before_ref=journal_begin,
            before_index=None if remote else publish,
            after=remote_publish if remote else None,
            executed=(once, state.plan_id) if once and not remote else None,
        )
        return None  # dispatched, or returned by the pass once its commit is made

    def _close_merged_back(self) -> None:
        """Close the run of each held plan whose erased commits are back only through a merge
        (round 111, merge-restored-start-stranded: the start, or the start and its pause,
        erased by a reset and merged back ``--no-ff``): the branch's line, which the history
        index reads, shows the plan as before the start (every approval refused
        E_ALREADY_EXECUTED, nothing to abort), while the run's actions ran. The controller
        commits ``plangate: fail`` (E_HISTORY_REWRITTEN) for it and lets go of the hold: its
        outcome is on the branch, and a resume approval goes on from its journal (a paused
        run pauses at its gate again), or an abort ends it. A reset back to the erased tip
        instead restores the run where it was."""
        for plan_id, (shas, how) in sorted(self._merged_back.items()):
            state = self.index.plans.get(plan_id)
            if state is None or not state.file or state.ambiguous or unsafe(state):
                continue
            if not self._open_run_among(plan_id, shas):  # no run, or one that ended there
                if how == MERGED:  # the commits themselves are back: the hold's end
                    self.holds.release([plan_id])
                    self.log.info("hold_released", plan=plan_id, reason="its commits are back")
                continue  # copies of a run that ended (an amended `complete`): still held

            came = (
                "only through a merge, beside the branch's line"
                if how == MERGED
                else "as copies the controller did not make (a cherry-pick, rebase or am: "
                "a person's commits, never its start or pause)"
            )
            message = (
                f"the controller's commits of this run ({', '.join(s[:12] for s in shas)}) are "
                f"back on {self.branch} {came}: the run is closed here; approve a resume to go "
                "on from where it stopped, or abort it"
            )
            self.log.warning("run_closed_merged_back", plan=plan_id, commits=shas, how=how)
            try:
                start = self._run_start_among(plan_id, shas)
                self._commit_plan(
                    state.file,
                    "fail",
                    _closed_failed("E_HISTORY_REWRITTEN", message, state.file),
                    state.hash,
                    f"E_HISTORY_REWRITTEN: {message}",
                    after=self._release_hold_of(plan_id),
                    trailers={CLOSES_START: start} if start else None,
                )
            except _Wait as wait:  # a person's uncommitted edit of the file: it waits, held
                self._wait(plan_id, str(wait))
            except (GitError, _Moved):
                raise
            except PlangateError as exc:
                self._wait(plan_id, f"cannot write {state.file}: {exc}")
        self._merged_back = {}

    def _run_start_among(self, plan_id: str, shas: list[str]) -> str | None:
        """The last start of ``plan_id`` among the controller's commits ``shas``: the run the
        closing ``fail`` names in ``Closes-Start:`` (the audit's cause for it)."""
        from controller.git.ownrecord import commit_records

        starts = [r.sha for r in commit_records(self._git_or_none, shas)
                  if _events(r).get(plan_id) == "start"]  # fmt: skip
        order = {sha: i for i, sha in enumerate(shas)}
        return max(starts, key=lambda sha: order[sha]) if starts else None

    def _open_run_among(self, plan_id: str, shas: list[str]) -> bool:
        """Do the controller's commits ``shas`` (oldest first) hold a run of ``plan_id`` that
        they do not end: a start, checkpoint or pause after the last complete, fail or
        abort among them?"""
        from controller.git.ownrecord import commit_records

        order = {sha: i for i, sha in enumerate(shas)}
        records = sorted(commit_records(self._git_or_none, shas), key=lambda r: order[r.sha])
        events = [_events(record).get(plan_id) for record in records]
        found = [event for event in events if event in RUN_EVENTS]
        return bool(found) and found[-1] not in ("complete", "fail", "abort")

    def _release_hold_of(self, plan_id: str) -> Callable[[str], None]:
        """Once a commit closing ``plan_id``'s run is made: let go of its hold."""

        def release(_sha: str) -> None:
            self.holds.release([plan_id])
            self.log.info("hold_released", plan=plan_id, reason="its run is closed")

        return release

    def _paused_at(self, row: dict[str, Any], plan_hash: str | None) -> Any:
        """The gate the plan's job row says its run is paused before: the pause's own row
        (``paused_gate``), or the row of a start of the same version that answered that gate
        and never landed (round 89, gatelost: the row is written before the branch moves, so
        a SIGKILL there, or a branch that moved meanwhile, left the pause named only by the
        unlanded start's ``gate_approved``; the next pass found no pause in the row, asked
        the controller's own record, which the unlanded commit held, and paused again before
        the very action the approval it started on had let run). None: no pause recorded."""
        paused = row.get("paused_gate")
        if paused is not None:
            return paused
        return self._unlanded_gate(row, plan_hash)

    def _unlanded_gate(self, row: dict[str, Any], plan_hash: str | None) -> Any:
        """The gate a row's start answered when that start is not on the branch (and the
        row is of ``plan_hash``, when given): the branch still shows the run paused there."""
        gate, start = row.get("gate_approved"), row.get("start")
        if not isinstance(gate, int | str) or isinstance(gate, bool) or not isinstance(start, str):
            return None  # no gate answered (a first approval, a resume), or no start
        if plan_hash is not None and row.get("plan_hash") != plan_hash:
            return None
        return None if self._published(start, self._head or self.head()) else gate

    def _forget_unlanded(self, plan_id: str, row: dict[str, Any]) -> None:
        """A start of this controller that is not on the branch (killed before its branch
        moved, the branch moved under it, or another controller won): its row goes, and
        when the start answered a gate the row is that pause again (round 89, gatelost: it
        went, and the gate's approval, decided again, paused there a second time). A start
        a rewrite erased, which holds the plan, keeps its row: put back, the run goes on
        from it (round 120: a daemon's fast-forward back to the erased tip left the plan
        ``executing`` with no job, nothing said, until a restart adopted it)."""
        erased = (self.holds.get(plan_id) or {}).get("commits")
        if isinstance(erased, list) and row.get("start") in erased:
            return
        gate = self._unlanded_gate(row, None)
        if gate is None:
            self.index.set_job(plan_id, None)
            return
        kept = {key: value for key, value in row.items() if key != "start"}
        self.index.set_job(plan_id, {**kept, "paused_gate": gate})
        self.log.warning("start_unlanded", plan=plan_id, start=row.get("start"), gate=gate)

    def _own_pause(self, state: PlanState) -> Recorded | None:
        """The controller's own record of a paused plan (its last commit of the file that
        wrote the ``execution:`` block), read when the index lost the pause's job row."""
        found = self.own_execution_record(state.file, self._head or self.head())
        if found is None:
            self.log.warning("pause_unrecorded", plan=state.plan_id, file=state.file)
        return found

    def _take_started(self) -> list[Job]:
        """Plans started (their commits made) and not handed to a worker: the pass's jobs."""
        started, self._started = self._started, []
        return started

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
            data = self._start_file(commit, f"{state.plan_id}/{name}")
            if data is not None:
                (run_dir / name).write_bytes(data)

    def _owned_jobs(self, already: set[str]) -> list[Job]:
        """Plans this controller started that are executing but not running: all of its jobs
        on the first pass (a restart) and after a rebuilt index; afterwards only the plans
        whose run ended without settling their job (:meth:`_job_ended`) and runs adopted
        (:meth:`_adopt_orphans`). A pass never scans every job: a thousand queued plans would
        cost each pass a thousand lookups."""
        self._adopt_orphans()
        with self._jobs_lock:
            if self._recheck is None or self._recheck_rebuilds != self.index.rebuilds:
                candidates = set(self.index.jobs())
                self._recheck_rebuilds = self.index.rebuilds
            else:
                candidates = self._recheck & self.index.jobs().keys()
            self._recheck = set()
            running = set(self._running)
        jobs, keep = [], set()
        for plan_id in sorted(candidates):  # _job_for may drop a job
            state = self.index.plans.get(plan_id)
            if plan_id in already:
                continue
            if plan_id in running:
                keep.add(plan_id)  # its end may leave it to run again
                continue
            if self._aside(plan_id):  # its outcome was refused by the remote: it waits
                keep.add(plan_id)
                continue
            if state is not None and state.status == "executing" and not self._edited(state):
                job = self._job_for(state)
            else:  # the branch no longer shows it executing: is the run ours, unfinished?
                job = self._left_job(plan_id, state)
            if job is not None and self._still_refused(job):
                keep.add(plan_id)  # offered again once its file changes
            elif job is not None and self._claimed(job):
                jobs.append(job)
        with self._jobs_lock:
            assert self._recheck is not None
            self._recheck |= keep
        return jobs

    def _claimed(self, job: Job) -> bool:
        """Is the run of ``job`` (a job row this pass takes up again: a restart, a copy of
        the state directory, an adopted orphan) this process's to go on with? Remote mode:
        the newest run event of the plan since the row's start (the start itself, or a
        checkpoint) that the controller made, by its record or by its seal, must be this
        process's own (its ``Controller:`` token). One that this state directory made by
        record but another process (a killed one) did is claimed first: a ``checkpoint``
        commit of this process's own token (:meth:`_claim_commit`), and only the push that
        put it on the remote lets the run go on. One sealed with this state's key and not in
        its record was made by another holder of a copy of the state directory (its claim,
        its progress or its outcome): the row goes, nothing of the run happens here, and
        the branch's record is the other's (round 93, heirlanded: a start the killed
        process had pushed was taken up by every holder of a copy of its state directory,
        the tool called by each, two ``complete`` commits). The run's own start is claimed
        whoever made it (a restored state adopts it by its seal); a later event is inherited
        only when this state directory's record holds it from before (not one this process
        adopted by its seal: :meth:`_adopt_sealed`). Local mode: True (one working tree, one
        controller)."""
        if self.config.remote is None:
            return True
        row = self.index.jobs().get(job.plan_id) or {}
        start = row.get("start")
        if not isinstance(start, str) or not start:
            return True
        mine = self.commit_controller()
        refused = self.refused.get(job.plan_id) or {}
        if str(refused.get("event") or "") in OUTCOME_EVENTS:
            return self._replays_outcome(job, start, mine)
        for _ in range(MAX_CLAIMS):
            head = self._head or self.head()
            newest = self._run_holder(job.plan_id, start, head)
            if newest is None:
                return True  # no run event to judge (a start not read): as before
            if newest.sha in self.own_commits and newest.trailers.get("Controller") == mine:
                return True
            inherited = newest.sha in self.own_commits and newest.sha not in self.restored_seals
            own_start = newest.sha == start and _events(newest).get(job.plan_id) == "start"
            if not own_start and not inherited:
                self.index.set_job(job.plan_id, None)
                self.log.warning(
                    "run_claimed_elsewhere",
                    plan=job.plan_id,
                    start=start,
                    found=f"{newest.sha[:12]} ({newest.subject})",
                    reason="another process holding a copy of this state directory took "
                    "the run up first (its claim, progress or outcome is on the branch): "
                    "nothing of it runs here",
                )
                return False
            try:
                # False: refused by the remote or not written; the plan waits
                return self._claim_commit(job, start, head)
            except _Moved:  # another push first: judged again from the remote's branch
                try:
                    self._head = self._sync()
                    self.index.scan(self.repo, self._head)
                except _Moved:
                    return False
        return False  # the branch kept moving: the next pass judges it again

    def _replays_outcome(self, job: Job, start: str, mine: str) -> bool:
        """A run whose only remaining step is an outcome the remote refused: the journal
        replays it, nothing acts. Replaying it is a claim too (round 94, heiroutcome: every
        holder of a copy of the state directory replayed it and pushed a ``complete``, two
        outcomes of one run): it goes on only while the branch holds, after the run's start,
        no outcome of the run by the controller (by its record or any seal) and no run event
        another holder made. Otherwise the row and the refusal go, nothing is committed,
        and the branch's record is the run's (logged ``run_claimed_elsewhere``). The race of
        two replays is decided at the outcome's push (:meth:`_taken_over`)."""
        head = self._head or self.head()
        email = self.config.identity.email.lower()
        found = None
        for record in self.repo.first_parent_log(start, head, [job.plan_id], newest_first=True):
            event = _events(record).get(job.plan_id)
            if not event or event not in RUN_EVENTS or record.author.email.lower() != email:
                continue
            if record.sha in self.own_commits and record.trailers.get("Controller") == mine:
                continue  # this process's own
            if self._another_holders(record) or (
                event in ENDINGS and record.sha in self.own_commits
            ):
                found = record
                break
        if found is None:
            return True
        self.index.set_job(job.plan_id, None)
        self.refused.release([job.plan_id])
        self.log.warning(
            "run_claimed_elsewhere",
            plan=job.plan_id,
            start=start,
            found=f"{found.sha[:12]} ({found.subject})",
            reason="the run's outcome, refused by the remote, is on the branch already or "
            "another process took the run up: the branch's record is the run's, nothing "
            "of it is committed here",
        )
        return False

    def _run_holder(self, plan_id: str, start: str, head: str) -> CommitRecord | None:
        """The newest run event of ``plan_id`` at or after its run's ``start`` that the
        controller made (by its record, or sealed with its key: a copy of its state
        directory); other commits under its name are anyone's progress (round 66)."""
        email = self.config.identity.email.lower()
        for record in self.repo.first_parent_log(start, head, [plan_id], newest_first=True):
            event = _events(record).get(plan_id)
            if not event or event not in RUN_EVENTS or record.author.email.lower() != email:
                continue
            if record.sha in self.own_commits or self._another_holders(record):
                return record
        try:
            return self.repo.commit(start)
        except GitError:
            return None

    def _claim_commit(self, job: Job, start: str, head: str) -> bool:
        """Claim a run this state directory's record holds but another process made: a
        ``checkpoint`` commit of the plan (its EXECUTION_LOG.md noting the claim; the plan
        file as the branch holds it) with this process's token, pushed; True once the
        remote took it. Raises :class:`_Moved` when another push came first."""
        name = job.plan_file.name
        text = self._start_file(start, f"{job.plan_id}/{name}")
        if text is None:
            return False
        log_path = f"{job.plan_id}/{LOG_NAME}"
        try:
            log = (self._read_committed(log_path, head) or b"").decode("utf-8")
        except (PlangateError, UnicodeDecodeError):
            log = ""
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        line = (
            f"- {stamp} run taken up again by controller {self.commit_controller()} "
            f"(start {start[:12]})\n"
        )
        log = (log if not log or log.endswith("\n") else log + "\n") + line
        made: list[str] = []
        self._commit_plan(
            f"{job.plan_id}/{name}",
            "checkpoint",
            lambda plan: plan,
            job.plan_hash,
            "run taken up again by this controller (its start was made by another process)",
            approved_by=str(job.approval.get("by") or "") or None,
            approval_commit=str(job.approval.get("commit") or "") or None,
            base=text.decode("utf-8", "replace"),
            write_plan=False,
            extra={log_path: log.encode("utf-8")},
            after=made.append,
        )
        if made:
            self.log.warning("run_claimed", plan=job.plan_id, start=start, commit=made[-1])
        return bool(made)

    def _stop_left_tools(self) -> None:
        """Stop every tool process a dead controller's run left running, by the journal of
        each run this controller holds a job row for (round 85, waitleft: a run killed
        mid-action whose PLAN.yml then held a YAML error or a symlink waited, as documented,
        with its tool still acting; so did a run held E_HISTORY_REWRITTEN). The journal's
        recovery comes before any decision about the plan's file: the in-doubt end and the
        plan's failure still wait for a readable file (the run's own recovery). Once per
        process and run (a left process is a dead process's: a later look finds none)."""
        jobs = self.index.jobs()
        with self._jobs_lock:
            running = set(self._running)
        rows = set()
        for plan_id, data in sorted(jobs.items()):
            plan_hash = data.get("plan_hash")
            if not isinstance(plan_hash, str) or not plan_hash:
                continue
            rows.add((plan_id, plan_hash))
            if (plan_id, plan_hash) in self._left_seen or plan_id in running:
                continue
            self._left_seen.add((plan_id, plan_hash))
            from controller.execution.executor import stop_left

            stop_left(self.state.path, plan_id, plan_hash)
        self._left_seen &= rows

    def _recover_executed(self) -> None:
        """Record as executed the frozen hash of every start of this controller that is on
        the branch and missing from ``executed``: a kill after the start commit moved the
        branch and before that record (written once the branch holds the commit) left only
        the job row, written before the move (round 30: a copy or move of the started plan,
        decided before the run was taken up again, would not read as already executed).
        Before any approval of the pass is decided; once per process and history build."""
        if self._executed_seen == self.index.rebuilds:
            return
        self._executed_seen = self.index.rebuilds
        head = self._head or self.head()
        for plan_id, data in sorted(self.index.jobs().items()):
            plan_hash, start = data.get("plan_hash"), data.get("start")
            if not plan_hash or not isinstance(start, str) or plan_hash in self.executed:
                continue
            if not self._published(start, head):
                continue  # never on the branch: it did not start (_job_for drops the row)
            self.executed[plan_hash] = {"plan": plan_id, "start": start}
            self.state.record_executed(plan_hash, plan_id, start)
            self.log.warning("executed_recovered", plan=plan_id, hash=plan_hash, start=start)

    def _hold_erased_starts(self) -> None:
        """Hold each plan whose first start the branch no longer holds, though this
        controller recorded it executed (``executed``: written only once the branch held the
        commit) and its job row names it: a rewrite erased a start no pass of the history
        index saw (killed after the start moved the branch, before the index learned the
        commit, then ``git reset --hard HEAD~1``), so no tip the index had seen went and
        :meth:`~controller.service.core.ControllerCore._history_rewritten` held nothing.
        The plan is held as any plan whose start a rewrite erased (docs/approvals.md "A
        rewritten branch"): restored, the run goes on from its journal. Round 120
        (erased-start-refused-unheld): its approval was refused E_ALREADY_EXECUTED ("already
        ran") though no action ran, and nothing named the remedy. A start the record does
        not name (killed before the branch moved, or right after) is one that never landed,
        as before: its row goes and the approval is decided again. Once per process and
        history build, before any row of a start not on the branch is dropped."""
        if self._erased_seen == self.index.rebuilds:
            return
        self._erased_seen = self.index.rebuilds
        head = self._head or self.head()
        found: dict[str, list[str]] = {}
        for plan_id, data in sorted(self.index.jobs().items()):
            start, plan_hash = data.get("start"), data.get("plan_hash")
            ran = self.executed.get(plan_hash) if isinstance(plan_hash, str) else None
            if not isinstance(start, str) or ran is None or ran.get("start") != start:
                continue
            if ran.get("plan") == plan_id and not self._published(start, head):
                found[plan_id] = [start]
        if found:
            self.holds.hold(found, head, iso(time.time()))
            self.log.error("history_rewritten", head=head, held=sorted(found), by="executed")

    def _distrust_older_journals(self) -> None:
        """The state directory is older than the branch (:meth:`_adopt_sealed` found commits
        this controller sealed after its record ends, and noted it): no journal of it can
        vouch for what ran after the copy (round 72: a point-in-time snapshot taken
        mid-burst; the journal of a run begun before it said no action began, and the killed
        daemon had called the action: it ran a second time). Every run open on the branch
        (the newest of the controller's own run events of the plan is its start or a
        checkpoint, no outcome committed since) has its journal set aside (kept beside it,
        ``<hash>.jsonl.older-than-branch-<time>``, for the person who checks): the run
        goes the lost-journal way, as an orphan with no journal does (:meth:`_adopt_orphans`),
        E_ACTION_IN_DOUBT until a person approves a resume. So does a run the journal shows
        finished whose outcome the branch lacks (the safe side: the branch shows no outcome,
        and what the copy's journal shows is no record of the run's end). Once per note,
        before any approval of the pass is decided; the note goes once every such journal is
        aside (a crash before: set aside again, in doubt all the same). Not detectable: a
        copy after which the controller committed nothing (docs/operations.md, Restore)."""
        if not self.state.locked or not self.state.older_than_branch():
            return
        from controller.execution.journal import journal_path

        head = self._head or self.head()
        jobs = self.index.jobs()
        candidates = set(jobs) | {
            plan_id for plan_id, state in self.index.plans.items() if state.status == "executing"
        }
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        for plan_id in sorted(candidates):
            start_hash = self._open_run(plan_id, head)
            if start_hash is None:
                continue  # no run of its own open on the branch: its journal is not read
            state = self.index.plans.get(plan_id)
            hashes = {start_hash, (jobs.get(plan_id) or {}).get("plan_hash")}
            hashes.add(state.frozen_hash if state is not None else None)
            aside = []
            for plan_hash in sorted(h for h in hashes if isinstance(h, str) and h):
                path = journal_path(self.state.path, plan_id, plan_hash)
                moved = _set_aside(path, f"older-than-branch-{stamp}")
                if moved is not None:
                    aside.append(moved.name)
            self.log.warning(
                "journal_older_than_branch",
                plan=plan_id,
                set_aside=aside,
                reason="the state directory is older than the branch (commits this "
                "controller sealed after its record ends): its journal cannot tell what the "
                "run did after the copy; the run fails E_ACTION_IN_DOUBT, nothing of it runs "
                "until a person approves a resume",
            )
        self.state.clear_older_than_branch()

    def _open_run(self, plan_id: str, head: str) -> str | None:
        """The frozen hash (``""`` when not named) of the plan's run open on the branch: the
        newest of the controller's own run events of the plan is a start or a checkpoint;
        None when it is an outcome (or there is none). One path-limited log, newest first."""
        from controller.git.records import plan_event

        found: str | None = None
        for record in self.repo.first_parent_log(None, head, [plan_id], newest_first=True):
            if record.sha not in self.own_commits:
                continue
            event = _events(record).get(plan_id)
            if not event or event not in RUN_EVENTS:
                continue
            if found is None and event in ENDINGS:
                return None
            found = found or ""
            if event == "start":
                named = plan_event(record, plan_id)
                plan_hash = named.trailers.get("Plan-Hash", "") if named else ""
                return plan_hash if plan_hash != "none" else ""
        return found

    def _adopt_orphans(self) -> None:
        """Plans ``executing`` by the controller's own start commit that its index has no job
        for: the state directory (or its index) was lost since. One controller per branch
        (docs/operations.md), so the run is this controller's: it becomes a job again. With
        its journal the run continues where it stopped; without it, the engine runs nothing
        and ends it E_ACTION_IN_DOUBT (a lost journal). Checked once per history build."""
        if self._orphans_seen == self.index.rebuilds:
            return
        self._orphans_seen = self.index.rebuilds
        jobs = self.index.jobs()
        for state in list(self.index.plans.values()):
            if state.status != "executing" or state.plan_id in jobs or state.last_commit is None:
                continue
            data = self._read_plan_data(state)
            plan_hash = state.frozen_hash
            if not isinstance(data, dict) or not plan_hash:
                continue
            # a start whose file carries no approval record is a lost run all the same (round
            # 71: a start adopted on first use stayed `executing` for good): in doubt, resumable
            approval = data.get("approval")
            approval = approval if isinstance(approval, dict) else {}
            if self._not_ours(state, self._head or self.head()):
                continue
            job = Job(state.plan_id, self._plan_path(state), plan_hash, approval)
            self.index.set_job(state.plan_id, {**_job_data(job), "start": state.last_commit})
            self._job_ended(state.plan_id)  # the pass looks at it (_owned_jobs)
            self.log.warning("run_adopted", plan=state.plan_id, hash=plan_hash)

    def _not_ours(self, state: PlanState, head: str) -> bool:
        """Is the newest run event of an orphan's plan under the controller's name one this
        controller did not make (round 51: a rebuilt host failed or completed the run; the
        old host, back, found no job row for it once its own was dropped, and the index,
        reading that outcome as a forged commit, still shows the plan executing)? Then it is
        not adopted: logged, nothing runs. One path-limited log, newest first, per orphan
        and history build; it stops at the first run event."""
        email = self.config.identity.email.lower()
        for record in self.repo.first_parent_log(None, head, [state.plan_id], newest_first=True):
            event = _events(record).get(state.plan_id)
            if not event or event not in RUN_EVENTS or record.author.email.lower() != email:
                continue
            if record.sha in self.own_commits:
                return False
            if not self.index.moved_on_by(self.repo, record, state.plan_id, state.hash):
                continue  # progress, or an end the file does not show: anyone's (66, 68)
            self.log.warning(
                "run_taken_over",
                plan=state.plan_id,
                status=state.status,
                file_status=state.file_status,
                found=f"{event} in {record.sha[:12]} ({record.subject}), made by not this "
                "controller (by its record)",
                reason="the plan's last run event under the controller's name was made by "
                "another controller (a rebuilt host) or forged: the run is not adopted, "
                "nothing runs and nothing is committed for it",
            )
            return True
        return False

    def _read_plan_data(self, state: PlanState) -> Any:
        from controller.errors import PlangateError
        from controller.plan import yamlio

        try:
            raw = self.repo.read_file(self._head or self.head(), state.file)
            if raw is None:
                return None
            return yamlio.read_yaml(raw.decode("utf-8"), state.file).data
        except (PlangateError, UnicodeDecodeError):
            return None

    def _still_refused(self, job: Job) -> bool:
        """Was this job's file refused by _approved_plan, and is it unchanged since? (A pass
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
        head = self._head or self.head()
        if not self._published(data.get("start"), head):
            self._forget_unlanded(state.plan_id, data)  # never published (a kill, a race)
            return None
        if self._drop_if_taken_over(state.plan_id, str(data["start"]), head):
            return None
        plan_file = self._plan_path(state)
        if self.config.remote is not None and not plan_file.exists():
            self._prepare_run_dir(state, self._head or self.head())
        return _job_of(state.plan_id, plan_file, data)

    def _edited(self, state: PlanState) -> bool:
        """Does the branch hold another version of a started plan than the one its job runs?
        (Round 33: a start killed right after its commit, then the plan edited in place and
        committed, params or actions changed, before the restart: the run waited for good,
        silently. Without the kill it goes on from what was approved, and so it does now:
        :meth:`_left_job`.)"""
        data = self.index.jobs().get(state.plan_id) or {}
        approved = data.get("plan_hash")
        return bool(approved and state.hash and state.hash != approved)

    def _left_job(self, plan_id: str, state: PlanState | None) -> Job | None:
        """The job this controller started for a plan whose start the branch no longer shows
        executing: its folder deleted or moved, its PLAN.yml renamed, a deletion reverted
        (a new file with no status), a commit read as a new request over it (round 30: such
        a run, killed right after its start commit, was dropped without a word). Found from
        the controller's own records, the job row and the start commit, never from the plan
        still being where it was: published and no outcome of it committed since, the run
        goes on as it would have without the kill, from the start commit's approved content
        (in a run folder of the state directory; never the working tree's or a copy's
        bytes), and its outcome commit writes the plan back where it started (or onto the
        file it was renamed to). A job whose outcome is on the branch (a kill before its row
        was cleared) is dropped."""
        data = self.index.jobs().get(plan_id)
        if not data or data.get("paused_gate") is not None or not data.get("plan_hash"):
            return None  # paused at a gate: the gate's approval starts it again
        if state is not None and (state.abort_requested or state.ambiguous or unsafe(state)):
            return None  # the pass records the abort; an ambiguous or unsafe plan is not read
        head = self._head or self.head()
        start = data.get("start")
        if not self._published(start, head):
            self._forget_unlanded(plan_id, data)  # never published (a kill, a race)
            return None
        assert start is not None
        ended = self._ended_since(plan_id, start, head)
        if ended is not None:
            if ended != "await-approval":  # the paused run keeps its row for the gate
                self.index.set_job(plan_id, None)  # a crash left the row of a finished run
            return None
        if self._drop_if_taken_over(plan_id, start, head):
            return None
        name = PurePosixPath(str(data.get("plan_file") or PLAN_FILES[0])).name
        plan_file = self.state.run_dir(plan_id) / name
        if not plan_file.exists() and not self._seed_run_dir(plan_id, start, name):
            self._wait(plan_id, f"E_GIT: the start commit {start[:12]} holds no {name}")
            return None
        self.log.warning(
            "run_continued",
            plan=plan_id,
            hash=data["plan_hash"],
            start=start,
            reason="the branch no longer shows the started plan executing (its folder or "
            "file deleted, moved or renamed since the start commit): run from the start commit",
        )
        return _job_of(plan_id, plan_file, data)

    def _ended_since(self, plan_id: str, start: str, head: str) -> str | None:
        """The controller's own outcome event of ``plan_id`` committed after ``start`` (the
        newest), if any: read from git (a deleted plan has no state in the index to say)."""
        for record in self.repo.first_parent_log(start, head, [plan_id], newest_first=True):
            if record.sha not in self.own_commits:
                continue
            event = _events(record).get(plan_id)
            if event in ENDINGS:
                return event
        return None

    def _seed_run_dir(self, plan_id: str, start: str, name: str) -> bool:
        """The run folder as the plan's files at its start commit (False: no plan file)."""
        data = self._start_file(start, f"{plan_id}/{name}")
        if data is None:
            return False
        run_dir = self.state.run_dir(plan_id)
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / name).write_bytes(data)
        log = self._start_file(start, f"{plan_id}/{LOG_NAME}")
        if log is not None:
            (run_dir / LOG_NAME).write_bytes(log)
        return True

    def _start_file(self, start: str, path: str) -> bytes | None:
        """A file of the plan's folder at its start commit; None when absent or too large to
        be read (an agent's huge EXECUTION_LOG.md committed before the approval: the run
        starts a log of its own instead of stopping every pass, round 32)."""
        from controller.errors import BlobTooLarge

        try:
            return self.repo.read_file(start, path)
        except BlobTooLarge:
            return None

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


def _closed_failed(code: str, message: str, file: str) -> Any:
    """The edit that ends a plan's run ``failed`` with ``code``: its ``execution:`` block (as
    the branch holds it) marked failed with the error, and ``plan.status: failed``."""
    from controller.plan import yamlio
    from controller.service.committing import _set_status

    def mutate(text: str) -> str:
        doc = yamlio.read_yaml(text, file)
        execution = dict(doc.data.get("execution") or {})
        execution.pop("gate", None)  # no pause is open any more
        execution.update(status="failed", finished_at=plans.now_utc())
        execution["error"] = {"code": code, "message": message}
        return _set_status(yamlio.set_block(doc, "execution", execution), "failed")

    return mutate


def _set_aside(path: Path, suffix: str) -> Path | None:
    """Rename a journal to ``<name>.<suffix>`` beside it (durably); None when there is none."""
    from controller.fsutil import fsync_dir

    target = path.with_name(f"{path.name}.{suffix}")
    try:
        os.rename(path, target)
    except FileNotFoundError:
        return None
    fsync_dir(path.parent)
    return target


def _committed_gate(plan: plans.LoadedPlan, own: Recorded | None) -> int | None:
    """The action the controller's own record shows the plan paused before (its ``gate:``
    preview), if the branch's ``execution:`` block is that record and the action is one of
    the plan's gated actions or waits at an ask (``on_failure: ask``, its own or the plan's)."""
    from controller.execution.executor import progress_of

    data = plan.data if isinstance(plan.data, dict) else {}
    execution = data.get("execution")
    recorded = own.blocks.get("execution") if own is not None and own.blocks else None
    if recorded is None or progress_of(recorded) != progress_of(execution):
        return None  # not the controller's record: it shows no pause of the controller's
    gate = execution.get("gate") if isinstance(execution, dict) else None
    action = gate.get("action") if isinstance(gate, dict) else None
    if not isinstance(action, int) or isinstance(action, bool):
        return None
    default = data.get("on_failure")
    paused = {
        a.get("id")
        for a in data.get("actions") or []
        if isinstance(a, dict)
        and (a.get("requires_approval") is True or a.get("on_failure", default) == "ask")
    }
    return action if action in paused else None
