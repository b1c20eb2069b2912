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

The Controller is put together from its duties, one module each: state and plumbing
(:mod:`~controller.service.core`), committing, freezing, deciding, starting, and running and
recording outcomes (:mod:`~controller.service.outcomes`); this module keeps the pass itself.
"""

from __future__ import annotations

import contextlib
import gc
import time
from collections.abc import Callable, Iterator
from pathlib import PurePosixPath
from typing import Any

from controller.approval import verdicts
from controller.errors import PlangateError, Problem
from controller.git.history import LOG_NAME, PlanState
from controller.git.ownrecord import hash_mismatch
from controller.git.records import plan_text
from controller.plan import yamlio
from controller.plan.plans import FREEZABLE, PLAN_FILES
from controller.service.core import MAX_PASSES, REMOTE, Job, _events, iso
from controller.service.core import _Moved as _Moved  # re-exported: callers catch and raise it
from controller.service.core import _Wait as _Wait
from controller.service.deciding import Deciding
from controller.service.outcomes import Outcomes
from controller.service.unreadable import UNREADABLE
from controller.service.untracked import UntrackedScanner

__all__ = ["MAX_PASSES", "REMOTE", "Controller", "Job", "UntrackedScanner", "iso"]


class Controller(Deciding, Outcomes):
    """One controller over one plans repository; holds the state-directory lock if asked."""

    # --- the pass -----------------------------------------------------------------------

    def reconcile(self, dispatch: Callable[[Job], None] | None = None) -> list[Job]:
        """One idempotent pass; returns the jobs to run now (never plans in running()).

        With ``dispatch``, a plan that starts in this pass is handed to it the moment its
        start commit is on the branch and its file in place, before the pass refreshes the
        index and looks at other plans; such jobs are not returned again. Outcomes of runs
        that ended meanwhile are committed with the pass's events, or after it.
        """
        with self.recording_pass():  # what `status` says of a controller that is stuck
            try:
                return self._reconcile(dispatch)
            finally:
                self.commit_finished()  # an outcome a busy worker left

    def _reconcile(self, dispatch: Callable[[Job], None] | None) -> list[Job]:
        with self._lock:
            # one reading of allowed_signers for the whole pass, recorded before any
            # approval is judged with it (round 125); unreadable: the pass stops here
            self.pin_signers()
            self._dispatch, self._dispatched = dispatch, set()
            self._next_pass()  # which plans refused by the remote this pass tries again
            try:
                for _ in range(MAX_PASSES):
                    try:
                        jobs = self._pass()
                        self._release_unneeded()  # refused events decided again (round 42)
                        self.last_error = None
                        return jobs
                    except _Moved:
                        continue
                self.log.warning(
                    "reconcile.contended",
                    tries=MAX_PASSES,
                    reason="the branch moved under every commit of this pass (others' "
                    "pushes or commits won): the next pass decides again from the new history",
                )
                return []
            finally:
                self._dispatch = None

    def _pass(self) -> list[Job]:
        # First of all, before any git command: a tool a dead controller's run left running
        # may hold .git/index.lock (its git commit), and every git write of the pass would
        # fail on it while the helper lives on to commit (round 124, hk-git)
        self._stop_left_tools()
        self._head = self._sync()
        self._catch_up_tree()  # a landed commit's files a full disk kept out (round 56)
        self.finish_shared_writes()  # a killed MCP submit's or approve's (round 83)
        cold = self.index.meta("last_commit") is None  # a lost (or new) index: no tip seen
        self.index.scan(self.repo, self._head)
        if cold:  # the index cannot see a rewrite: the controller's record of its commits can
            self.hold_erased_own(self._head)
        self._hold_erased_starts()  # a start the index never saw, erased (round 120)
        self._release_holds()
        self._close_merged_back()  # a run whose start came back only through a merge
        self._stop_left_tools()  # job rows the scan added (round 85: before any decision)
        self._release_refusals()
        self._recover_executed()  # before any approval is decided (SPEC §15)
        self._distrust_older_journals()  # a restored copy: its journals vouch for nothing
        self._record_policy()  # before any start commit names it (SPEC §11)
        untracked = self._untracked_plans()
        jobs: list[Job] = []
        # The pass's events share commits (the first one alone, at once); in remote mode
        # each commit is also a push, so sharing saves a round trip per plan.
        looked_at = self._to_look_at()
        # their files' attributes, when a file's bytes equal to its commit need them (round
        # 78), asked of git at once: a snapshot for the pass
        files = [state.file for state in looked_at if state.file and self.config.remote is None]
        files += [f"{PurePosixPath(file).parent}/{LOG_NAME}" for file in files]  # a run's too
        self._batching(first_alone=True)
        with self.repo.remembering_conversions(files):
            try:
                running = self.running()
                for state in looked_at:
                    if state.plan_id in running:
                        if state.abort_requested:
                            with self._jobs_lock:
                                self._abort.add(state.plan_id)
                        continue
                    if self._aside_plan(state):
                        continue  # the remote refused its last commit: it waits (round 40)
                    job = self._act(state)
                    if job is not None:
                        jobs.append(job)
                # a file an agent may be about to commit is not adopted: it would race its commit
                self._adopt_settled([path for path in sorted(untracked) if self._settled(path)])
                self._convert_sources()
                self._flush(stop=True)
            finally:
                self._drop_batch()  # after a failure: nothing of it was committed
                self._claims.clear()  # started ones are in `executed` now
        # a job decided before the pass's commits whose outcome they carried (an abort's run
        # ended by a worker meanwhile) is over: never handed out (round 111)
        jobs = [job for job in jobs if self.job_is_current(job)]
        jobs += self._take_started()
        jobs += self._owned_jobs({j.plan_id for j in jobs} | self._dispatched)
        return jobs

    def _release_refusals(self) -> None:
        """Forget refusals of plans gone from the branch with no job of ours left."""
        if not self.refused:
            return
        jobs = self.index.jobs()
        gone = [p for p in self.refused.load() if p not in self.index.plans and p not in jobs]
        if gone:
            self.refused.release(gone)
            self.log.info("refusal_cleared", plans=gone, reason="the plan left the branch")

    def _to_look_at(self) -> list[PlanState]:
        """The plans a pass acts on: those the index says may need a decision or a write,
        and those it said wait (looked at again until the reason is gone); never every
        executing plan of a burst."""
        states = {state.plan_id: state for state in self.index.pending()}
        for plan_id in self._waiting.keys() - states.keys():
            state = self.index.plans.get(plan_id)
            if state is not None:
                states[plan_id] = state
        return [states[plan_id] for plan_id in sorted(states)]

    def _settled(self, path: str) -> bool:
        """Has the uncommitted file been left alone for ``adopt_settle`` seconds? If not,
        :attr:`adopt_due` says when to look again (monotonic clock)."""
        if self.adopt_settle <= 0:
            return True
        try:
            age = time.time() - (self.repo.path / path).stat().st_mtime
        except OSError:
            return False
        if age >= self.adopt_settle:
            return True
        due = time.monotonic() + self.adopt_settle - max(age, 0.0)
        self.adopt_due = due if self.adopt_due is None else min(self.adopt_due, due)
        return False

    def run_once(self, progress: Callable[[str, int, int | None], None] | None = None) -> int:
        """Do all the work that needs no new input, then return 0 (``plangate run --once``);
        ``progress(task, done, total)`` hears of each plan run."""
        seen: dict[str, int] = {}
        with _set_aside() as aside:
            for _ in range(1000):
                jobs = self.reconcile()
                jobs = [j for j in jobs if seen.get(j.plan_id, 0) < 3]
                if not jobs:
                    return 0
                aside()  # and what the pass left alive (the index, the parse cache's spans)
                for done, job in enumerate(jobs, 1):
                    seen[job.plan_id] = seen.get(job.plan_id, 0) + 1
                    with self.recording_pass(clear=False):  # its outcome's commit may fail
                        self.execute(job)
                    if progress is not None:
                        progress("running approved plans", done, len(jobs))
        return 0

    # --- reporting ----------------------------------------------------------------------

    def status(self, *, reasons: bool = False, plan: str | None = None) -> list[dict[str, Any]]:
        """Every plan the branch holds: status, hash, approver, last event, waiting reason;
        with ``reasons``, also why each plan waits, failed or was refused (reads its file).
        With ``plan``, that plan's row only: the one reading of its status every reader of
        one plan takes (MCP ``status``, ``log`` and ``wait``; round 81: ``wait`` and ``log``
        read the file's status, one the controller had ignored)."""
        with self._lock:
            failed: PlangateError | None = None
            try:
                self.index.scan(self.repo, self.head())
            except PlangateError as exc:
                self.last_error = str(exc)
                self.status_error = failed = exc
            states = [s for s in self.index.plans.values() if plan in (None, s.plan_id)]
            running, waiting = self.running() | self._run_elsewhere(states), dict(self._waiting)
            if reasons and self.config.remote is None:
                waiting |= self._outcomes_waiting(running, waiting, states)
            problems = {s.plan_id: self._blocker(s) for s in states}
            rows = self._plan_rows(states, running, waiting, problems, reasons)
            if plan is not None and rows:
                self._name_displaced(rows)
                self._name_pass_failed(rows)
                return rows  # a plan of the index has no other row
            rows += self._left_rows({s.plan_id for s in self.index.plans.values()})
            rows += self._source_rows()
            rows = [row for row in rows if plan in (None, row["plan"])]
            self._name_displaced(rows)
            self._name_pass_failed(rows)
            if plan is not None and not rows and failed is not None:
                # the history not read: git's failure, never "no such plan" (round 85)
                raise failed
            return rows

    def _name_displaced(self, rows: list[dict[str, Any]]) -> None:
        """Each row's ``displaced``: the files saved under ``.git/plangate-displaced/`` for
        its plan (a person's or an agent's bytes a controller commit wrote its record over,
        round 122; :mod:`controller.git.displaced`), until someone removes them."""
        from controller.git import displaced

        found = (
            displaced.listed(self.repo.git_dir, [row["plan"] for row in rows], self.repo.path)
            if self.config.remote is None
            else {}
        )
        for row in rows:
            row["displaced"] = found.get(row["plan"], [])

    def _name_pass_failed(self, rows: list[dict[str, Any]]) -> None:
        """Each row's ``pass_failed``: why the controller's last pass stopped, while its
        passes fail (:class:`~controller.service.statedir.PassFailure`; None once a pass
        completes); a plan whose next step is the controller's (approved, or executing with
        no worker on it) and that waits on nothing else waits on that (round 124, atk124d:
        the row said ``executing`` and nothing while every pass failed ``E_GIT``)."""
        from controller.service.statedir import waits_on_passes

        failure = self.pass_failure.read()
        for row in rows:
            row["pass_failed"] = dict(failure) if failure is not None else None
            row["waiting"] = row.get("waiting") or waits_on_passes(row, failure)

    def _run_elsewhere(self, states: list[PlanState]) -> set[str]:
        """The executing plans whose run the controller holds open right now in its own
        process, as a reader (``status``, MCP, ``show``) sees it: the state directory's holder
        holds the run's journal (the one the page reads its progress from). A row's
        ``running`` means that on every surface (round 117, status-running-false-mid-run:
        the page showed action 1 running while ``status --json`` and MCP said ``running:
        false``, knowing only their own process's workers). The controller itself knows its
        workers (:meth:`running`)."""
        if self.state.locked:
            return set()
        from controller.execution.journal import held_by, journal_path

        journals = {
            journal_path(self.state.path, s.plan_id, plan_hash): s.plan_id
            for s in states
            if s.status == "executing" and (plan_hash := s.frozen_hash or s.hash)
        }
        if not journals:
            return set()
        return {journals[path] for path in held_by(list(journals), self.state.holder())}

    def withdrawal(self, plan_hash: str, folder: str) -> dict[str, Any] | None:
        """The withdrawal of this version of a plan (rejected, or aborted before it ran), as
        the history index records it under any name (``plan``, ``commit``, ``by``, ``time``,
        ``status``), that would bind a new plan of it at the plan folder ``folder``
        (:func:`verdicts.binding_withdrawal`: an approver's binds every plan, a producer's a
        plan whose authors are hers), or None: asked by MCP ``submit`` (round 118,
        submit-withdrawn-version-accepted), as the controller refuses an approval of it."""
        with self._lock:
            self.index.scan(self.repo, self.head())
            found = self._recorded_withdrawal(plan_hash)
            if found is None:
                return None
            here = self.index.origins_at(folder, plan_hash)
            authors = here if here is not None else self.index.originators_of(plan_hash)
            return verdicts.binding_withdrawal(
                found, authors or frozenset(), self.config, int(time.time())
            )

    def _recorded_withdrawal(self, plan_hash: str) -> dict[str, Any] | None:
        """:meth:`withdrawal` as the index already holds it (no scan: a status row's)."""
        import json

        entry = self.index.withdrawn.get(plan_hash)
        return json.loads(entry) if entry else None

    def _left_rows(self, shown: set[str]) -> list[dict[str, Any]]:
        """Runs this controller started whose plan the branch no longer shows (its folder
        now a link or a file, PLAN.yml a folder: the outcome cannot be written) and whose
        outcome is not committed: a row each, saying why (round 33: ``status`` said nothing,
        the run's actions had run)."""
        rows: list[dict[str, Any]] = []
        head = self._head or self.head()
        for plan_id, data in sorted(self.index.jobs().items()):
            start = data.get("start")
            if plan_id in shown or not isinstance(start, str) or data.get("paused_gate"):
                continue
            try:
                if not self._published(start, head) or self._ended_since(plan_id, start, head):
                    continue
            except PlangateError:
                continue
            name = PurePosixPath(str(data.get("plan_file") or PLAN_FILES[0])).name
            why = self._unwritable({f"{plan_id}/{name}": b""}) or (
                f"{plan_id} is no plan folder on the branch any more"
            )
            reason = f"the outcome waits: {why}; remove what is in the way and the next pass "
            reason += "commits the outcome"
            rows.append(
                {
                    "plan": plan_id,
                    "file": f"{plan_id}/{name}",
                    "status": "executing",
                    "problem": None,
                    "reason": reason,
                    "file_status": None,
                    "hash": data.get("plan_hash"),
                    "frozen_hash": data.get("plan_hash"),
                    "approver": None,
                    "approvers": [],
                    "risk": None,
                    "estimate": None,
                    "last_event": f"{start[:12]} plangate: start {plan_text(plan_id)}",
                    "last_commit": start,
                    "running": False,
                    "waiting": reason,
                    "notes": [],
                }
            )
        return rows

    def _outcomes_waiting(
        self, running: set[str], waiting: dict[str, str], states: list[PlanState]
    ) -> dict[str, str]:
        """Why an approved or started plan that no worker here runs waits (``status`` is
        another process than the controller, which keeps its reasons in memory): edits in the
        working tree the controller will not overwrite, or a folder or special file where its
        PLAN.yml should be (rounds 11 and 12)."""
        import os
        import stat

        found: dict[str, str] = {}
        states = [
            state
            for state in states
            if state.status in ("approved", "executing", "awaiting_approval")
            and not (state.unsafe or state.plan_id in running or state.plan_id in waiting)
        ]
        # their attributes asked at once, when bytes equal to the commit need them (round 78)
        with self.repo.remembering_conversions([state.file for state in states if state.file]):
            for state in states:
                try:
                    mode = os.lstat(self.repo.path / state.file).st_mode
                except FileNotFoundError:
                    if state.status != "approved":  # a started plan: its outcome has no file
                        found[state.plan_id] = (
                            f"the outcome waits: {state.file} was deleted from the working tree; "
                            "restore it (git restore) and the controller commits the outcome"
                        )
                    continue
                except OSError:
                    mode = None
                if mode is not None and not stat.S_ISREG(mode):
                    found[state.plan_id] = (
                        f"E_UNSAFE_PATH: {state.file} is not a regular file in the working tree; "
                        "restore it (plangate never follows or reads it)"
                    )
                    continue
                try:
                    self._check_uncommitted(state, self._head or self.head())
                except _Wait as wait:
                    started = state.status != "approved"
                    found[state.plan_id] = f"the outcome waits: {wait}" if started else str(wait)
                    continue
                except PlangateError:
                    continue
                mismatch = self._run_file_mismatch(state)  # committed so: no edit to name
                if mismatch is not None:
                    found[state.plan_id] = mismatch
        return found

    def _run_file_mismatch(self, state: PlanState) -> str | None:
        """A started plan whose file no longer hashes to its approval: the controller will
        not run it (it logs ``plan_waiting``, in its own process); say so here too (round 29:
        a stale file committed over a killed start, with an edit, left status silent)."""
        if state.status != "executing" or not state.approved_hash:
            return None
        try:
            path = self.repo.path / state.file
            found = self._run_file(path, self.repo.path, state.approved_hash).hash
        except (OSError, UnicodeDecodeError, PlangateError):
            return None  # reported as unreadable or missing elsewhere
        if found == state.approved_hash:
            return None
        return (
            f"E_PLAN_HASH_MISMATCH: {state.file} hashes to {found}, but {state.approved_hash} "
            "was approved; restore the approved file to run it"
        )

    def _plan_rows(
        self,
        states: list[PlanState],
        running: set[str],
        waiting: dict[str, str],
        problems: dict[str, Problem | None],
        reasons: bool,
    ) -> list[dict[str, Any]]:
        foreign = {s.plan_id: self.foreign_run(s) for s in states}
        judged = {s.plan_id: self._judged_facts(s) for s in states}
        # a hold blocks everything else, so its reason comes first (round 119, amended-start-
        # hold-misexplained: an agent's amend of the start left a look-alike start whose seal
        # no key verifies, and the row blamed "another controller or a lost key")
        held = {s.plan_id: self._held_reason(s.plan_id) for s in states}
        return [
            {
                "plan": s.plan_id,
                "file": s.file,
                "status": UNREADABLE if problems[s.plan_id] else _shown(s, foreign[s.plan_id]),
                "problem": _problem_json(problems[s.plan_id]),
                "held": _held_code(s),
                "reason": self._reason(s, problems[s.plan_id]) if reasons else None,
                "file_status": s.file_status,
                "hash": s.hash,
                "frozen_hash": s.frozen_hash,
                "approver": s.approver,
                "approvers": list(s.approvers) or ([s.approver] if s.approver else []),
                "risk": judged[s.plan_id][0],
                "estimate": judged[s.plan_id][1],
                "last_event": s.last_event,
                "last_commit": s.last_commit,
                "running": s.plan_id in running,
                "waiting": held[s.plan_id]
                or waiting.get(s.plan_id)
                or foreign[s.plan_id]
                or self.refused_reason(s.plan_id)
                or self._moved_on_reason(s, running)
                or self._withdrawn_version_reason(s)
                or self._frozen_block_reason(s),
                "notes": self._row_notes(s, problems[s.plan_id]),
            }
            for s in sorted(states, key=lambda s: s.plan_id)
        ]

    def _judged_facts(self, state: PlanState) -> tuple[Any, Any]:
        """The risk and estimate a status row shows: as the controller's own freeze wrote
        them (the index keeps ``frozen:`` from the controller's commits alone), else, for a
        frozen version the controller never froze (an agent's own ``frozen:`` block, or its
        ``plangate freeze``), as the catalog and policy judge the plan, which is what the
        controller decides by (round 114, atk114a ``status-risk-from-forged-frozen``: the row
        showed the agent's ``risk: low`` while the high rule applied)."""
        if state.risk is not None or not state.frozen_hash or not state.blob:
            return state.risk, state.estimate
        from controller.approval.policy import frozen_facts
        from controller.plan import yamlio

        try:
            data = yamlio.read_yaml(self.repo.blob(state.blob).decode("utf-8"), state.file).data
            facts = frozen_facts(state.plan_id, data, self.config, self.repo.path / state.file)
        except (PlangateError, UnicodeDecodeError, ValueError, TypeError):
            return None, None
        return facts.get("risk"), facts.get("estimate")

    def _withdrawn_version_reason(self, state: PlanState) -> str | None:
        """Why a version waiting for its approval can never have one: someone entitled
        withdrew this exact version before it ran (rejected, or aborted), under this name or
        another, so every approval of it is refused E_VERSION_WITHDRAWN (round 119,
        withdrawn-version-copy-shown-waiting: a frozen copy of a vetoed version read "waiting
        for an approval" until an approval was refused, while MCP ``submit`` refused the
        same copy at once). The index's lookup by the version's hash, as :meth:`withdrawal`."""
        if state.status != "pending_approval" or not state.hash:
            return None
        found = self._recorded_withdrawal(state.hash)
        if found is not None:  # does it bind this plan (a producer's binds hers only)?
            found = verdicts.binding_withdrawal(
                found, self.index.withdrawers(state), self.config, int(time.time())
            )
        if found is None:
            return None
        plan = plan_text(str(found.get("plan")))
        return (
            f"E_VERSION_WITHDRAWN: this exact version ({state.hash}) was "
            f"{found.get('status') or 'rejected'} in {plan} ({str(found.get('commit'))[:12]} "
            f"by {found.get('by')}) before it ran: no approval of it counts, under any name; "
            f"change what the reviewer objected to and submit that new version (`status` of "
            f"{plan} gives who and why)"
        )

    def _frozen_block_reason(self, state: PlanState) -> str | None:
        """Why a frozen version waiting for its approval cannot be approved as the file now
        stands: its ``frozen:`` block (which is not hashed) no longer validates, so the next
        approval is refused ``E_PLAN_NOT_FROZEN`` (round 114, atk114a
        ``status-row-silent-on-forged-frozen``: the row said only "waiting", and the approver
        learned it by approving). Read only where someone other than the controller wrote
        the file last (the controller's own block is valid by construction)."""
        if state.status != "pending_approval" or not state.frozen_hash or not state.blob:
            return None
        if state.blob == state.controller_blob:
            return None
        from controller.plan.schema import Frozen

        try:
            data = yamlio.read_yaml(self.repo.blob(state.blob).decode("utf-8"), state.file).data
        except (PlangateError, UnicodeDecodeError, ValueError):
            return None  # the row says unreadable or invalid otherwise
        block = data.get("frozen") if isinstance(data, dict) else None
        if not isinstance(block, dict):
            return None  # no block: never frozen as the file stands, said elsewhere
        try:
            Frozen.model_validate(block)
        except ValueError as exc:
            errors: list[Any] = getattr(exc, "errors", lambda: [])()
            loc = ".".join(str(p) for p in (errors[0]["loc"] if errors else ()))
            where = f"frozen.{loc}" if loc else "frozen"
            return (
                f"E_SCHEMA_INVALID at {where}: the frozen: block is not one the controller "
                "writes (it was edited after the freeze), so an approval of this version is "
                f"refused E_PLAN_NOT_FROZEN; put the controller's block back (git checkout "
                f"{state.controller_commit[:12] or 'the freeze commit'} -- {state.file})"
            )
        return None

    def _row_notes(self, state: PlanState, problem: Problem | None) -> list[str]:
        """The history's last notes, and the notes of every reader of the record: ``show``'s
        for every plan in every state (round 65: the text is not the one the controller
        recorded in the path's life; round 66: a log alone changed; round 67: a plan not run
        yet, pending or frozen, with a log the controller never wrote: :func:`_record_notes`),
        and, when the row speaks of a version the controller froze, approved or ran (a draft
        or pending plan is the next pass's to freeze), round 64's when the text does not hash
        to its kept ``frozen.hash`` (:func:`controller.git.ownrecord.hash_mismatch`)."""
        notes = state.notes[-5:]
        if problem is not None or state.ambiguous:  # the record's notes all the same (round 69)
            return [*notes, *(n for n in self._record_notes(state) if n not in notes)]
        stale = hash_mismatch(state.file, state.hash, state.frozen_hash)
        found = [stale] if stale is not None and state.status not in FREEZABLE else []
        found += [note for note in self._record_notes(state) if note not in found]
        return [*notes, *found]

    def _record_notes(self, state: PlanState) -> tuple[str, ...]:
        """``show``'s notes of the path's record (:func:`controller.git.ownrecord.record_notes`),
        read only where someone else committed a file of the record last (the plan file or
        its log, :meth:`PlanState.record_commits`; round 66: a log alone rewritten, deleted or
        swapped; round 67: a log committed before the plan file, the index's ``loose_logs``):
        a record whose every file the controller committed last is its own, and a path with
        no record nor a claim of one (:meth:`PlanState.has_record`: a draft) has nothing to
        note, so a pass over unchanged plans and drafts runs no git."""
        from controller.git.ownrecord import record_notes
        from controller.service.statedir import is_own_commit

        own = self.own_commits
        if state.unsafe or not state.last_commit:
            return ()
        head = self._head or self.head()
        if state.ambiguous:  # show reads each file of the folder's record (round 69)
            return self._ambiguous_notes(state, head)
        if not state.has_record():
            return ()
        if (
            own.known
            and not state.log_claimed
            and all(sha in own for sha in state.record_commits())
        ):
            return ()
        is_own = is_own_commit(self.config, own)
        return record_notes(
            self._git_or_none, head, state.file, is_own, plans_dir=self.config.plans_dir
        )

    def _ambiguous_notes(self, state: PlanState, head: str) -> tuple[str, ...]:
        """The record notes of a folder holding both plan files: of each of them, as ``show``,
        the page and ``/api/plan/`` note their record though neither file is read (round 69:
        the row carried only E_PLAN_AMBIGUOUS beside the agent's forged log)."""
        from controller.git.ownrecord import record_notes
        from controller.service.statedir import is_own_commit

        is_own = is_own_commit(self.config, self.own_commits)
        found: list[str] = []
        for name in PLAN_FILES:
            file = f"{state.plan_id}/{name}"
            if self.repo.blob_sha(head, file) is None:
                continue
            notes = record_notes(
                self._git_or_none, head, file, is_own, plans_dir=self.config.plans_dir
            )
            found += [note for note in notes if note not in found]
        return tuple(found)

    def _held_reason(self, plan_id: str) -> str | None:
        held = self.holds.get(plan_id)
        if held is None:
            return None
        erased = ", ".join(str(sha)[:12] for sha in held.get("commits") or [])  # type: ignore[attr-defined]
        return (
            f"E_HISTORY_REWRITTEN: a rewrite of the branch erased the controller's commits of "
            f"this plan ({erased}, since {held.get('since')}); restore them or delete the plan"
        )

    def _moved_on_reason(self, state: PlanState, running: set[str]) -> str | None:
        """Why a plan the branch shows ``executing`` runs nowhere here: a commit under the
        controller's name that this controller did not make moved its run on (a later
        start the file shows: :func:`~controller.git.lifecycle.shows_end`, the one rule of the
        index and the take-over check, round 68), and the take-over check
        dropped the run (round 67: ``status`` said ``executing``, nothing waiting, for
        good). A ``fail`` or ``abort`` so made is the status the branch shows."""
        foreign = state.foreign_event
        if state.status != "executing" or not foreign or state.plan_id in running:
            return None
        try:
            record = self.repo.commit(foreign)
            if not self.index.moved_on_by(self.repo, record, state.plan_id, state.hash):
                return None  # progress, or an end the file does not show: anyone's (round 68)
        except PlangateError:
            return None
        event = _events(record).get(state.plan_id)
        return (
            f"the run was taken over: {event} in {foreign[:12]} under the controller's name, not "
            "made by this controller (by its record), moved the run on (another host, a "
            "rebuilt state directory or a forged commit); nothing more runs here and nothing "
            "is committed for it: an allowed aborter sets the plan `aborted` to end it"
        )

    def _source_rows(self) -> list[dict[str, Any]]:
        """Committed sources (PLAN.json & co.) that do not convert: a row each, with the
        conversion's code, so ``status`` says why no plan appears (converting is pure). A
        source the folder holds (:data:`controller.plan.names.HELD_CODES`) is ``held`` as a
        held plan file's row is (round 74: the row said it in ``problem`` only, and the page
        read the folder again)."""
        from controller.plan.names import HELD_CODES
        from controller.service import sources as source_files

        rows: list[dict[str, Any]] = []
        try:
            head = self.head()
            found = self._sources.committed(self.repo, head)
        except PlangateError:
            return rows
        for plan_id, source in sorted(found.items()):
            if plan_id in self.index.plans:
                continue
            problem = source_files.source_outcome(self._sources, self.repo, head, plan_id, source)
            if not isinstance(problem, Problem):
                continue  # it converts: the controller's next pass does it
            rows.append(
                {
                    "plan": plan_id,
                    "file": source,
                    "status": UNREADABLE,
                    "problem": problem.to_json(),
                    "held": problem.code if not source and problem.code in HELD_CODES else None,
                    "reason": f"{problem.code}: {problem.message}",
                    "file_status": None,
                    "hash": None,
                    "frozen_hash": None,
                    "approver": None,
                    "approvers": [],
                    "risk": None,
                    "estimate": None,
                    "last_event": None,
                    "last_commit": None,
                    "running": False,
                    "waiting": None,
                    "notes": [],
                }
            )
        return rows

    def _reason(self, state: PlanState, problem: Problem | None) -> str | None:
        """Why the plan waits, failed or was refused (:mod:`controller.plan.summary`)."""
        from controller.plan import summary

        if problem is not None:
            line = f" line {problem.line}" if problem.line else ""
            return f"{problem.code}{line}: {problem.message}"
        if state.ambiguous or state.unsafe:  # no file is read: the index's own word why
            code = "E_PLAN_AMBIGUOUS" if state.ambiguous else "E_UNSAFE_PATH"
            return next((n for n in reversed(state.notes) if n.startswith(code)), None)
        if state.status in DECIDED_REASONS:
            return self._withdrawal_reason(state)
        if state.status not in _REASONED or state.blob is None:
            return None
        withdrawn = self._withdrawn_version_reason(state)  # no approval counts (round 119)
        if withdrawn is not None:
            return withdrawn
        try:
            data = self.repo.blob(state.blob)
            doc = yamlio.read_yaml(data.decode("utf-8"), state.file).data
            return summary.reason(self._as_recorded(state.file, doc), state.status)
        except (PlangateError, UnicodeDecodeError):
            return None

    def _withdrawal_reason(self, state: PlanState) -> str | None:
        """Who rejected (or aborted before it ran) this version, in which commit, and what
        they wrote (``plangate reject -m``): the history index's withdrawal of the version
        and that commit's words (a user's trial: docs/agents.md sent agents to ``status``
        for the reason, and only ``git show`` had it)."""
        import json

        from controller.git.message import decision_note

        entry = self.index.withdrawn.get(state.frozen_hash or state.hash or "")
        if not entry:
            return None
        found = json.loads(entry)
        commit = str(found.get("commit") or "")
        message = self._git_or_none("log", "-1", "--format=%s%n%b", commit) or ""
        subject, _, body = message.partition("\n")
        said = decision_note(subject, body)
        where = f"{found.get('status') or state.status} by {found.get('by')} in {commit[:12]}"
        return f"{where}: {said}" if said else f"{where} (no reason given)"

    def _as_recorded(self, file: str, doc: Any) -> Any:
        """The plan's data with its ``execution:``/``approval:`` blocks as the controller's
        own commits recorded them (round 62: :func:`controller.git.ownrecord.shown_record`,
        the page's rule): a failed plan's reason is the controller's error, never one an
        agent wrote in (and a later controller commit carried)."""
        from controller.git.ownrecord import OWNED, shown_record
        from controller.service.statedir import is_own_commit

        if not isinstance(doc, dict) or not any(doc.get(key) for key in OWNED):
            return doc
        branch = {key: doc.get(key) for key in OWNED}
        is_own = is_own_commit(self.config, self.own_commits)
        head = self._head or self.head()
        plans_dir = self.config.plans_dir
        record = shown_record(self._git_or_none, head, file, is_own, branch, plans_dir=plans_dir)
        shown = {key: value for key, value in doc.items() if key not in OWNED}
        return {**shown, **{k: v for k, v in record.blocks.items() if v is not None}}

    def _blocker(self, state: PlanState) -> Problem | None:
        """Why this plan's file cannot carry a status (None: it can, or it needs no check).
        Checked where the index found no status, a version not frozen, or a top level that
        parses but is no block mapping (round 75: a JSON root read as its parsed status)."""
        suspect = state.status is None or state.file_status is None or state.unwritable
        if not suspect and not (
            state.status == "pending_approval" and state.frozen_hash != state.hash
        ):
            return None
        blob = state.blob
        found = self.unreadable.judge(
            state.plan_id, state.file, blob, lambda: self.repo.blob(blob) if blob else None
        )
        if found is None and blob and state.file_status == "pending_approval":
            return self._review_hidden(state.file, self._head or self.head())
        return found


@contextlib.contextmanager
def _set_aside() -> Iterator[Callable[[], None]]:
    """``run --once`` with what lives on set aside from the cyclic collector (``gc.freeze``:
    the modules imported by then, and, each time the function given is called, what lives
    then, such as what a pass left: the history index, the parse cache's spans), all of it
    back (``gc.unfreeze``) at the end. A 1,000-action run's full collections walked them
    again and again: 0.1-0.3 ms of each action (round 83). What a pass or a job makes is
    collected as before, and nothing set aside is lost: unfrozen, the next full collection
    walks it. Not in the daemon, whose passes and workers overlap; nor in a process that
    set objects aside itself (its own freeze is left as it is)."""
    if gc.get_freeze_count():
        yield lambda: None
        return
    gc.freeze()
    try:
        yield gc.freeze
    finally:
        gc.unfreeze()


def _held_code(state: PlanState) -> str | None:
    """The index's verdict that no file of the plan's folder is read (``E_PLAN_AMBIGUOUS``:
    two entries claim the plan file's place; ``E_UNSAFE_PATH``: a hostile name or a link),
    or None. Every reader of the row takes it as the row has it (round 73: the page and
    ``/api/plan/`` of a held folder read one of its files again)."""
    if state.ambiguous:
        return "E_PLAN_AMBIGUOUS"
    return "E_UNSAFE_PATH" if state.unsafe else None


#: Statuses whose plan file says why the plan is there (``status`` shows it).
_REASONED = ("invalid", "failed", "awaiting_approval", "pending_approval")


def _problem_json(problem: Problem | None) -> dict[str, Any] | None:
    return None if problem is None else problem.to_json()


#: The fields of a ``status`` row that quote the repository's text as its writers wrote it, or
#: fixed words about it: the plan's path and file, its status as the index and as the file
#: say it, the history's last event and notes, and an unreadable file's ``problem`` (what
#: reading the file found: a blocker never quotes the catalog, :func:`plans.status_blocker`).
#: An answer to an agent keeps them as written (rounds 62, 63: masked where they equal a
#: secret, a right guess read apart from a wrong one); ``reason`` too where it is the plan's
#: own problem (:data:`OWN_REASONS`).
AUTHOR_FIELDS = frozenset(
    {"plan", "file", "status", "file_status", "last_event", "notes", "problem"}
)
#: The fields that are the controller's material: what an answer redacts.
CONTROLLER_FIELDS = frozenset(
    {"reason", "hash", "frozen_hash", "approver", "approvers", "risk", "estimate", "last_commit"}
    | {"running", "waiting", "held", "displaced", "pass_failed"}
)
#: Statuses whose ``reason`` is the plan's own problem: an invalid plan's ``validation:``
#: block (quoting the plan as written, round 62) and an unreadable file's problem.
OWN_REASONS = ("invalid", UNREADABLE)
#: Statuses whose ``reason`` quotes a person's decision commit (who rejected or aborted the
#: version, and what they wrote): git's text, as ``last_event`` is.
DECIDED_REASONS = ("rejected", "aborted")
#: Statuses whose ``reason`` is the controller's record as it committed it (a failed run's
#: error, a gate's ask): redacted when written, never again, as MCP ``log`` passes the record
#: on (round 64's ``AS_RECORDED``); round 70's MCP ``status`` rows carry it, and masking the
#: author's expected value in it a second time answered a right guess of a secret with
#: ``***`` only (round 65's ``pre-mcp-status``, ``ver-mcp-status``, seen in CI run C).
RECORDED_REASONS = ("failed", "awaiting_approval", "pending_approval")


def author_text(row: dict[str, Any]) -> dict[str, Any]:
    """What of a status row is its author's text (the values an answer keeps as written),
    by field: a tuple of the strings a field holds, a mapping of such for ``problem``. Every
    field must be one of :data:`AUTHOR_FIELDS` or :data:`CONTROLLER_FIELDS`: a field neither
    names is the controller's (redacted), and a test holds every row's fields to the two."""
    own: dict[str, Any] = {}
    for key in AUTHOR_FIELDS & row.keys():
        value = row[key]
        if isinstance(value, dict):
            own[key] = {k: (v,) for k, v in value.items() if isinstance(v, str)}
        else:
            own[key] = (*value,) if isinstance(value, list) else (value,)
    if row.get("status") in (*OWN_REASONS, *RECORDED_REASONS, *DECIDED_REASONS):
        own["reason"] = (row.get("reason"),)
    return own


def _shown(state: PlanState, foreign: str | None) -> str | None:
    """The status a row shows: the history index's, or, for another controller's run
    (:meth:`ControllerCore.foreign_run`), the status its commits wrote in the file: the row
    says it waits on that controller, never that it waits for an approval (round 67)."""
    return state.file_status or state.status if foreign else state.status
