"""``plangate audit``: re-derive, from git history alone, whether every execution was allowed.

No state directory is read. The branch's first-parent history is replayed through a fresh
in-memory :class:`controller.git.history.HistoryIndex`; every approval request is verified by
:func:`controller.approval.approvals.verify_approval` *at the commit where it was made* (with the
identities that had changed the plan by then), and every controller commit is checked
against it:

- a ``start`` must rest on a valid approval whose commit its ``Approval-Commit`` trailer
  names, and the content it starts must hash to the approved hash;
- an outcome (``complete``, ``fail``, ``await-approval``, ``abort``) must follow a start;
- with ``approval.require_signed``, controller commits must be signed too (otherwise anyone
  can forge the controller's identity);
- every controller commit must be one the controller makes: subject
  ``plangate: <event> <plan id>``, a status that event sets, and no change to the plan's
  hashed content except a freeze's conversion of legacy references and a ``convert`` that
  creates a plan from its PLAN.json & co. (``controller-unexplained`` otherwise: someone
  wrote as the controller);
- a human commit must not set a controller-only status, edit the ``approval``/``execution``
  blocks or EXECUTION_LOG.md, or change the content of an approved plan.

Anything else is a finding; ``plangate audit`` exits 1 when there is one.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from controller.approval import approvals
from controller.git.gitrepo import GitRepo
from controller.git.history import HistoryEvent, HistoryIndex, build_request, withdraw_rule
from controller.plan import plans
from controller.settings import Config

OUTCOME_EVENTS = ("complete", "fail", "await-approval", "abort", "checkpoint")
#: The statuses each controller event leaves a plan in (see controller.service.reconcile).
EVENT_STATUS: dict[str, frozenset[str]] = {
    "convert": frozenset({"pending_approval", "draft"}),  # a new plan only (see _unexplained)
    "freeze": frozenset({"pending_approval"}),
    "invalid": frozenset({"invalid"}),
    "refuse": frozenset({"pending_approval", "awaiting_approval", "failed"}),
    "partial": frozenset({"pending_approval"}),
    "start": frozenset({"executing"}),
    "await-approval": frozenset({"awaiting_approval"}),
    "complete": frozenset({"completed"}),
    "fail": frozenset({"failed"}),
    "abort": frozenset({"aborted"}),
    "checkpoint": frozenset({"executing"}),
}


@dataclass
class Execution:
    plan: str
    start_commit: str
    approval_commit: str | None
    approver: str | None
    approval_valid: bool
    code: str | None = None
    message: str = ""
    hash_ok: bool = True
    outcome: str | None = None
    #: the hash that was started (and approved, when ``hash_ok``)
    plan_hash: str | None = None
    #: what the approval was: ``approve`` (a first approval), ``gate`` or ``resume``
    approval_kind: str | None = None
    approved_at: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    outcome_commit: str | None = None
    #: who asked for the abort (the controller's abort commit says it in ``Aborted-By:``)
    aborted_by: str | None = None


@dataclass
class AuditReport:
    executions: list[Execution] = field(default_factory=list)
    findings: list[dict[str, str]] = field(default_factory=list)
    #: rejections and abort requests: ``{kind, plan, commit, by, at}``
    decisions: list[dict[str, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.findings

    def to_json(self) -> dict[str, Any]:
        from dataclasses import asdict

        return {
            "ok": self.ok,
            "executions": [asdict(e) for e in self.executions],
            "decisions": self.decisions,
            "findings": self.findings,
        }


class Auditor:
    """Consumes history events and keeps the verdicts."""

    def __init__(self, repo: GitRepo, config: Config) -> None:
        self.repo = repo
        self.config = config
        self.report = AuditReport()
        self.verdicts: dict[str, tuple[approvals.ApprovalRequest, approvals.Decision]] = {}
        self.open: dict[str, Execution] = {}
        self.index: HistoryIndex | None = None

    def flag(self, event: HistoryEvent, kind: str, detail: str) -> None:
        self.report.findings.append(
            {"plan": event.plan_id, "commit": event.commit.sha, "kind": kind, "detail": detail}
        )

    def __call__(self, event: HistoryEvent) -> None:
        if event.kind == "request":
            self._verify(event)
        elif event.kind == "controller":
            self._controller(event)
        elif event.kind in ("reject", "abort-request"):
            self.report.decisions.append(
                {
                    "kind": event.kind,
                    "plan": event.plan_id,
                    "commit": event.commit.sha,
                    "by": event.detail,
                    "at": _iso(event.commit.commit_time),
                }
            )
        else:
            self.flag(event, event.kind, event.detail)

    def _verify(self, event: HistoryEvent) -> None:
        assert event.after is not None
        file = event.after.file

        def check(data: bytes) -> tuple[tuple[str, ...], str | None]:
            loaded = plans.validate_text(data.decode("utf-8", "replace"), Path(file), self.config)
            return tuple(p.code for p in loaded.problems), loaded.hash

        request = build_request(
            event.after,
            self.repo,
            check,
            require_signed=self.config.approval.require_signed,
            allowed_signers=self.config.approval.allowed_signers,
            authors=self.index.authors if self.index is not None else None,
        )
        self.verdicts[event.plan_id] = (
            request,
            approvals.verify_approval(request, self.config.approval),
        )

    def _controller(self, event: HistoryEvent) -> None:
        commit = event.commit
        if self.config.approval.require_signed:
            signature = self.repo.verify_commit(commit.sha, self.config.approval.allowed_signers)
            if not signature.valid:
                self.flag(
                    event,
                    "forged-controller",
                    f"commit claims the controller identity but is not validly signed "
                    f"({signature.message})",
                )
        verb = commit.subject.split()[1] if commit.subject.startswith("plangate: ") else ""
        unexplained = self._unexplained(event, verb)
        if unexplained:
            self.flag(event, "controller-unexplained", unexplained)
        if verb == "start":
            self._start(event)
        elif verb in OUTCOME_EVENTS:
            self._outcome(event, verb)

    def _unexplained(self, event: HistoryEvent, verb: str) -> str | None:
        """Why this commit under the controller's identity is not one the controller makes."""
        after, before = event.after, event.before
        assert after is not None
        if event.commit.subject != f"plangate: {verb} {event.plan_id}" or verb not in EVENT_STATUS:
            return f"subject {event.commit.subject!r} is not a plangate event for {event.plan_id}"
        if after.file_status not in EVENT_STATUS[verb]:
            return f"a {verb} commit cannot set status {after.file_status}"
        if before is None or before.blob is None or before.hash == after.hash:
            return None
        if verb == "freeze" and self._same_content(before.blob, after.blob, after.file):
            return None  # legacy ${...} references converted to $<...>
        return f"a {verb} commit changed the plan's content ({before.hash} -> {after.hash})"

    def _same_content(self, old: str, new: str | None, file: str) -> bool:
        """Equal hashes once legacy references count as converted (as freezing does)."""
        if new is None:
            return False
        hashes = {
            plans.validate_text(self.repo.blob(b).decode("utf-8", "replace"), Path(file)).hash
            for b in (old, new)
        }
        return len(hashes) == 1 and None not in hashes

    def _start(self, event: HistoryEvent) -> None:
        trailer = event.commit.trailers.get("Approval-Commit")
        request, decision = self.verdicts.pop(event.plan_id, (None, None))
        execution = Execution(
            event.plan_id,
            event.commit.sha,
            trailer,
            decision.approver if decision else None,
            bool(decision and decision.valid),
        )
        assert event.after is not None
        execution.plan_hash = event.after.hash
        execution.started_at = _iso(event.commit.commit_time)
        if request is not None:
            execution.approval_kind = request.kind.value
            execution.approved_at = _iso(request.commit_time)
        self.report.executions.append(execution)
        self.open[event.plan_id] = execution
        if request is None or decision is None:
            execution.message = "no approval request precedes this start"
            self.flag(event, "start-without-approval", execution.message)
            return
        if decision.valid and self.config.approval.max_age is not None:
            # The start commit's time is the controller's clock when it verified (§5 max_age).
            at_start = replace(request, verified_at=event.commit.commit_time)
            decision = approvals.verify_approval(at_start, self.config.approval)
            execution.approval_valid = decision.valid
        execution.code, execution.message = decision.code, decision.message
        if request.commit != trailer:
            self.flag(
                event,
                "start-without-approval",
                f"Approval-Commit {trailer} is not the approval request {request.commit}",
            )
        if not decision.valid:
            self.flag(
                event,
                "start-without-approval",
                f"the approval {request.commit[:12]} was not valid: {decision.code}: "
                f"{decision.message}",
            )
        assert event.after is not None
        if event.after.hash != request.current_hash:
            execution.hash_ok = False
            self.flag(
                event,
                "hash-mismatch",
                f"started content hashes to {event.after.hash}, approved was "
                f"{request.current_hash}",
            )

    def _outcome(self, event: HistoryEvent, verb: str) -> None:
        execution = self.open.get(event.plan_id)
        if execution is None:
            self.flag(event, "outcome-without-start", f"{verb} without a start commit")
            return
        execution.outcome = verb
        execution.outcome_commit = event.commit.sha
        if verb != "checkpoint":  # a run that paused at a gate ended there too
            execution.finished_at = _iso(event.commit.commit_time)
        if verb == "abort":
            execution.aborted_by = event.commit.trailers.get("Aborted-By")
        assert event.after is not None
        approved = self.verdicts.get(event.plan_id)
        del approved
        if verb != "checkpoint" and verb != "await-approval":
            self.open.pop(event.plan_id, None)


def _iso(ts: int) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def audit_repo(repo: GitRepo, config: Config, head: str) -> AuditReport:
    index = HistoryIndex(
        None,
        plans_dir=config.plans_dir,
        controller_email=config.identity.email,
        may_withdraw=withdraw_rule(config.approval),
        max_plan_bytes=config.limits.max_plan_bytes,
    )
    auditor = Auditor(repo, config)
    auditor.index = index
    index.scan(repo, head, auditor)
    index.close()
    return auditor.report
