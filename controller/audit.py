"""``plangate audit``: re-derive, from git history alone, whether every execution was allowed.

No state directory is read. The branch's first-parent history is replayed through a fresh
in-memory :class:`controller.history.HistoryIndex`; every approval request is verified by
:func:`controller.approvals.verify_approval` *at the commit where it was made* (with the
identities that had changed the plan by then), and every controller commit is checked
against it:

- a ``start`` must rest on a valid approval whose commit its ``Approval-Commit`` trailer
  names, and the content it starts must hash to the approved hash;
- an outcome (``complete``, ``fail``, ``await-approval``, ``abort``) must follow a start;
- with ``approval.require_signed``, controller commits must be signed too (otherwise anyone
  can forge the controller's identity);
- a human commit must not set a controller-only status, edit the ``approval``/``execution``
  blocks or EXECUTION_LOG.md, or change the content of an approved plan.

Anything else is a finding; ``plangate audit`` exits 1 when there is one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller import approvals, plans
from controller.gitrepo import GitRepo
from controller.history import HistoryEvent, HistoryIndex, build_request
from controller.settings import Config

OUTCOME_EVENTS = ("complete", "fail", "await-approval", "abort", "checkpoint")


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


@dataclass
class AuditReport:
    executions: list[Execution] = field(default_factory=list)
    findings: list[dict[str, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.findings

    def to_json(self) -> dict[str, Any]:
        from dataclasses import asdict

        return {
            "ok": self.ok,
            "executions": [asdict(e) for e in self.executions],
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

    def flag(self, event: HistoryEvent, kind: str, detail: str) -> None:
        self.report.findings.append(
            {"plan": event.plan_id, "commit": event.commit.sha, "kind": kind, "detail": detail}
        )

    def __call__(self, event: HistoryEvent) -> None:
        if event.kind == "request":
            self._verify(event)
        elif event.kind == "controller":
            self._controller(event)
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
        if verb == "start":
            self._start(event)
        elif verb in OUTCOME_EVENTS:
            self._outcome(event, verb)

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
        self.report.executions.append(execution)
        self.open[event.plan_id] = execution
        if request is None or decision is None:
            execution.message = "no approval request precedes this start"
            self.flag(event, "start-without-approval", execution.message)
            return
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
        assert event.after is not None
        approved = self.verdicts.get(event.plan_id)
        del approved
        if verb != "checkpoint" and verb != "await-approval":
            self.open.pop(event.plan_id, None)


def audit_repo(repo: GitRepo, config: Config, head: str) -> AuditReport:
    index = HistoryIndex(None, plans_dir=config.plans_dir, controller_email=config.identity.email)
    auditor = Auditor(repo, config)
    index.scan(repo, head, auditor)
    index.close()
    return auditor.report
