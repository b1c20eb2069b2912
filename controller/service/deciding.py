"""Deciding: what one plan needs in this pass, and the verdict on an approval request.

An approval request is decided by :func:`controller.approval.verdicts.decide` (the §5 rules
and the §11 policy): refused -> ``approval: {status: refused, ...}`` and back to where a new
approval is needed; counted but more needed -> ``approval: {status: partial, ...}`` and back
to ``pending_approval``; enough -> the plan starts (:mod:`~controller.service.starting`).
An abort of a plan that is not running is recorded; a pending plan is frozen
(:mod:`~controller.service.freezing`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from controller.approval import approvals, verdicts
from controller.errors import GitError, PlangateError
from controller.git.history import PlanState
from controller.git.planstate import held
from controller.plan import plans, yamlio
from controller.service.committing import _set_approval, _set_status, aborted_by
from controller.service.core import Job, _Moved, _Wait
from controller.service.freezing import Freezing
from controller.service.starting import Starting

#: Where a refused approval leaves the plan: it needs a new approval from there.
_REFUSED_TO = {
    approvals.Transition.APPROVE: "pending_approval",
    approvals.Transition.GATE: "awaiting_approval",
    approvals.Transition.RESUME: "failed",
}


class Deciding(Freezing, Starting):
    """Acts on one plan: decide an approval, record an abort, or freeze."""

    def _act(self, state: PlanState) -> Job | None:
        if not _has_work(state) and state.plan_id not in self._waiting:
            return None  # e.g. an executing plan queued for a worker: nothing to read or write
        if state.ambiguous:  # the index's verdict (round 73: it was frozen all the same)
            self._waiting.pop(state.plan_id, None)  # the row says why: E_PLAN_AMBIGUOUS
            return None
        try:
            if self.config.remote is None:
                self._check_uncommitted(state, self._head)
            self._waiting.pop(state.plan_id, None)
            foreign = self.foreign_run(state)
            if foreign is not None:  # another host's run: no commit moves it (round 67)
                raise _Wait(foreign)
            if state.request is not None:
                return self._decide(state)
            if state.abort_requested:
                return self._record_abort(state)
            if state.status in ("pending_approval", None) or state.file_status is None:
                # None: a new file with no valid status, or one that cannot be read
                ignored = state.status == "pending_approval" and state.file_status not in (
                    None,
                    "pending_approval",
                )  # a status the index ignored: the version it holds is frozen all the same
                self._freeze(state.file, first=state.status is None, ignored=ignored)
        except _Wait as wait:
            self._wait(state.plan_id, str(wait))
        except (GitError, _Moved):
            raise
        except PlangateError as exc:
            self._wait(state.plan_id, f"cannot write {state.file}: {exc}")
        return None

    def _earlier_run_waits(self, state: PlanState, plan_hash: str | None) -> None:
        """A plan put at the path of a run whose outcome is not committed yet (its folder
        removed and a new plan written there; remote mode: the forge refused the outcome)
        starts once that outcome is on the branch: the job row, one per path, is the
        earlier run's until then (round 42). Raises :class:`_Wait`, said in ``status``."""
        data = self.index.jobs().get(state.plan_id)
        if not data or data.get("paused_gate") is not None or not data.get("start"):
            return
        if not data.get("plan_hash") or data.get("plan_hash") == plan_hash:
            return
        start = str(data.get("start"))
        refused = (
            " (the remote refused it: see refused.json)" if self.refused.get(state.plan_id) else ""
        )
        raise _Wait(
            f"the run started at {state.plan_id} by {start[:12]} (another plan, since removed) "
            f"has not committed its outcome yet{refused}; this plan starts once it has"
        )

    def _check_text(self, file: str) -> Callable[[bytes], tuple[tuple[str, ...], str | None]]:
        def check(data: bytes) -> tuple[tuple[str, ...], str | None]:
            loaded = plans.validate_text(data.decode("utf-8", "replace"), Path(file), self.config)
            return tuple(p.code for p in loaded.problems), loaded.hash

        return check

    def _decide(self, state: PlanState) -> Job | None:
        request, verdict = verdicts.decide(
            state,
            self.repo,
            self.config,
            self._check_text(state.file),
            verified_at=int(time.time()),
            authors=self.index.authors,
            withdrawn=self.index.withdrawn,
            plan_authors=lambda: self.index.withdrawers(state),
        )
        ran = self._ran_as(request.current_hash)
        held = self.holds.get(state.plan_id)
        if held is not None and self._erased_run(request.current_hash, held):
            ran = None  # its run is the one the rewrite erased: the hold says why (below)
        if request.kind is approvals.Transition.APPROVE and ran:  # whoever approved it
            verdict = verdicts.already_executed(verdict, request, ran)
        elif held is not None and verdict.outcome != "refuse":
            erased = ", ".join(str(sha)[:12] for sha in held.get("commits") or [])  # type: ignore[attr-defined]
            verdict = verdicts.refused(
                verdict,
                request,
                "E_HISTORY_REWRITTEN",
                f"a rewrite of {self.branch} erased the controller's commits of this plan "
                f"({erased}); it is not acted on until they are back on the branch",
            )
        hidden = (
            None if verdict.outcome == "refuse" else self._review_hidden(state.file, request.commit)
        )
        if hidden is not None:
            verdict = verdicts.refused(verdict, request, hidden.code, hidden.message)
        record = verdict.record
        if verdict.outcome == "start":
            self._earlier_run_waits(state, request.current_hash)
            decision = approvals.Decision(
                True, verdict.approver, signer=record.get("signature") or None
            )
            return self._start(state, request, decision, record)
        if verdict.outcome == "partial":
            self.log.info(
                "approval_partial",
                plan=state.plan_id,
                approvals=[v.by for v in verdict.votes],
                missing=verdict.missing,
                commit=request.commit,
            )
            body = f"{len(verdict.votes)} approval(s); still needs {verdict.missing}"
            self._commit_plan(
                state.file,
                "partial",
                _set_approval(record, "pending_approval"),
                request.current_hash,
                body,
            )
            return None
        decision = verdict.decision
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

    def _erased_run(self, plan_hash: str | None, held: dict[str, object]) -> bool:
        """Is the start this frozen hash ran by (``executed``) one of the commits whose
        erasure holds the plan, while no pass of the history index ever read a start of
        this hash on the branch? An approval of it is then refused for the hold
        (E_HISTORY_REWRITTEN: restore them), not E_ALREADY_EXECUTED: no branch anyone read
        showed a run of it (``plangate check`` and the audit, reading the same history,
        know of none), and the restored start goes on with the run (round 120,
        erased-start-refused-unheld: a kill inside the start's index write, then ``git
        reset --hard HEAD~1``). A start the index read (it notes each hash's first start,
        kept through rewrites) started on this branch: a rewrite that erased it is
        "rewritten history" of a version that already started, refused E_ALREADY_EXECUTED
        as before, the hold shown beside it (rounds 58 ``softreset``, 93 ``bk``, 116
        ``sr``: a start erased while its run went on, or after it ended)."""
        ran = self.executed.get(plan_hash or "")
        erased = held.get("commits") or []
        if ran is None or not isinstance(erased, list) or ran.get("start") not in erased:
            return False
        return self.index.ran_as(plan_hash) is None

    def _ran_as(self, plan_hash: str | None) -> str | None:
        """Where this frozen hash already ran (or starts, in this very pass), if it did: by
        the state directory's record (executed.jsonl) or by a start commit on the branch,
        which the history index reads as it applies each commit (round 50: a controller with
        a new state directory ran a copy of a version whose start commit was on the branch;
        ``plangate check`` reads the same index). A start commit under the controller's name
        it did not make counts too: refusing a run is safe."""
        ran = self.executed.get(plan_hash or "")
        if ran is not None:
            return f"{ran['plan']} (start {ran['start'][:12]})"
        started = self.index.ran_as(plan_hash)
        if started is not None:
            return started
        return verdicts.started_in_pass(self._claims, plan_hash)

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

        self._commit_plan(
            state.file,
            "abort",
            mutate,
            state.hash,
            "aborted on request",
            trailers=aborted_by(state),
            after=lambda _sha: self.index.set_job(state.plan_id, None),
        )
        return None


def _has_work(state: PlanState) -> bool:
    """Might this plan need a write in this pass? (Otherwise its files are not even read: a
    thousand executing plans waiting for a worker cost a pass nothing each.)"""
    if held(state):
        return False  # E_UNSAFE_PATH or E_PLAN_AMBIGUOUS: never read, written or acted on
    if state.request is not None or state.abort_requested:
        return True
    return state.status in ("pending_approval", None) or state.file_status is None
