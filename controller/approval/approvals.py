"""The approval rules (SPEC §5) and the human side of the lifecycle (SPEC §4), as pure data.

Nothing here reads git or files: :mod:`controller.git.history` gathers the facts about an
approval request into an :class:`ApprovalRequest`, and :func:`verify_approval` returns a
:class:`Decision`. The same functions serve the live controller and ``plangate audit``, so
the two can never disagree about what a valid approval is.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum

from controller.settings import ApprovalSettings

#: Status changes a commit not authored by the controller may make (SPEC §4).
#: ``None`` is "the plan did not exist on the branch before this commit".
HUMAN_TRANSITIONS: dict[str | None, frozenset[str]] = {
    None: frozenset({"draft", "pending_approval", "approved"}),
    "draft": frozenset({"pending_approval"}),
    "pending_approval": frozenset({"draft", "approved", "rejected"}),
    "invalid": frozenset({"draft", "pending_approval"}),
    "awaiting_approval": frozenset({"approved", "aborted"}),
    "failed": frozenset({"approved"}),
    "executing": frozenset({"aborted"}),
}

#: Statuses only the controller writes: a human commit setting them is always illegal.
CONTROLLER_ONLY = frozenset(
    {"invalid", "executing", "awaiting_approval", "completed", "failed", "aborted"}
)


class Transition(Enum):
    NONE = "none"  # the status did not change
    LEGAL = "legal"  # e.g. draft -> pending_approval, pending_approval -> rejected
    APPROVE = "approve"  # pending_approval (or a new plan) -> approved
    GATE = "gate"  # awaiting_approval -> approved: approve the paused action
    RESUME = "resume"  # failed -> approved: resume at the first unfinished action
    ABORT = "abort"  # executing/awaiting_approval -> aborted
    ILLEGAL = "illegal"


def classify(old: str | None, new: str | None) -> Transition:
    """What a human commit that moved a plan from ``old`` to ``new`` asks for."""
    if old == new or new is None:
        return Transition.NONE
    if new not in HUMAN_TRANSITIONS.get(old, frozenset()):
        return Transition.ILLEGAL
    if new == "approved":
        return {"awaiting_approval": Transition.GATE, "failed": Transition.RESUME}.get(
            old or "", Transition.APPROVE
        )
    if new == "aborted":
        return Transition.ABORT
    return Transition.LEGAL


def approver_allowed(email: str, patterns: Iterable[str]) -> bool:
    """Glob patterns on the email, case-insensitive; an empty list allows nobody.

    An address must have exactly one ``@``: otherwise ``*@ops.example.com`` would match
    ``x@evil.org@ops.example.com`` (``*`` matches ``@`` too).
    """
    email = email.strip().lower()
    if email.count("@") != 1:
        return False
    return any(fnmatch.fnmatchcase(email, p.strip().lower()) for p in patterns)


@dataclass(frozen=True)
class ApprovalRequest:
    """The facts about one approving commit that §5 needs, gathered from history."""

    plan_id: str
    commit: str
    kind: Transition
    author_email: str
    committer_email: str
    commit_time: int
    #: Codes of the plan's validation problems at the approving commit (empty: valid).
    problems: tuple[str, ...]
    current_hash: str | None
    frozen_hash: str | None
    #: The approving commit itself changed the hashed content (or an evil merge did).
    changed_in_commit: bool
    #: Identities (emails) of every commit that changed the plan's hashed content.
    changers: frozenset[str]
    #: When frozen.hash took its current value (commit time), for max_age.
    frozen_since: int | None = None
    #: For a gate approval or a resume: the hash the earlier approval was for.
    approved_hash: str | None = None
    signature_valid: bool | None = None
    signer: str | None = None
    signature_message: str = ""
    #: Set when a later commit voided the request before the controller acted.
    voided_by: str | None = None
    #: The verifier's own clock (the live controller: now; the audit: the start commit's
    #: time). ``max_age`` counts up to the later of this and the approving commit's time,
    #: because commit times come from the approver's clock and can be backdated.
    verified_at: int | None = None


@dataclass(frozen=True)
class Decision:
    valid: bool
    approver: str
    code: str | None = None
    message: str = ""
    signer: str | None = None

    def record(self, request: ApprovalRequest, at: str) -> dict[str, object]:
        """The ``approval:`` block the controller writes (SPEC §5)."""
        if self.valid:
            block: dict[str, object] = {
                "status": "approved",
                "by": self.approver,
                "at": at,
                "commit": request.commit,
                "plan_hash": request.current_hash,
                "signature": self.signer,
            }
            if request.kind is Transition.GATE:
                block["gate"] = True
            if request.kind is Transition.RESUME:
                block["resume"] = True
            return block
        return {
            "status": "refused",
            "code": self.code,
            "message": self.message,
            "by": self.approver,
            "commit": request.commit,
        }


def approver_of(request: ApprovalRequest, policy: ApprovalSettings) -> str:
    return request.committer_email if policy.identity == "committer" else request.author_email


def verify_approval(request: ApprovalRequest, policy: ApprovalSettings) -> Decision:
    """Apply every rule of §5 in order; the first failure is the refusal."""
    approver = approver_of(request, policy)
    for check in (
        _check_void,
        _check_frozen,
        _check_approver,
        _check_self,
        _check_signed,
        _check_age,
    ):
        refusal = check(request, policy, approver)
        if refusal is not None:
            code, message = refusal
            return Decision(False, approver, code, message, request.signer)
    return Decision(True, approver, signer=request.signer if request.signature_valid else None)


Refusal = tuple[str, str] | None


def _check_void(request: ApprovalRequest, policy: ApprovalSettings, approver: str) -> Refusal:
    if request.voided_by:
        return (
            "E_PLAN_HASH_MISMATCH",
            f"the plan's content changed in {request.voided_by[:12]} after it was approved",
        )
    return None


def _check_frozen(request: ApprovalRequest, policy: ApprovalSettings, approver: str) -> Refusal:
    if request.problems:
        return (
            "E_PLAN_NOT_FROZEN",
            f"the plan does not validate ({', '.join(sorted(set(request.problems)))})",
        )
    if request.frozen_hash is None:
        return ("E_PLAN_NOT_FROZEN", "the plan has no frozen.hash; it was never frozen")
    if request.current_hash != request.frozen_hash:
        return (
            "E_PLAN_HASH_MISMATCH",
            f"the plan hashes to {request.current_hash} but frozen.hash is "
            f"{request.frozen_hash}: it changed after it was frozen",
        )
    if request.changed_in_commit:
        return (
            "E_PLAN_HASH_MISMATCH",
            f"the approving commit {request.commit[:12]} also changed the plan's content",
        )
    if request.approved_hash is not None and request.approved_hash != request.current_hash:
        return (
            "E_PLAN_HASH_MISMATCH",
            "the plan changed since it was first approved; a gate or resume approval "
            "needs the same hash",
        )
    return None


def _check_approver(request: ApprovalRequest, policy: ApprovalSettings, approver: str) -> Refusal:
    if not approver_allowed(approver, policy.approvers):
        allowed = ", ".join(policy.approvers) or "nobody (approval.approvers is empty)"
        return (
            "E_APPROVER_NOT_ALLOWED",
            f"{approver} ({policy.identity} of {request.commit[:12]}) is not an approver; "
            f"allowed: {allowed}",
        )
    return None


def _check_self(request: ApprovalRequest, policy: ApprovalSettings, approver: str) -> Refusal:
    if policy.allow_self_approval:
        return None
    if approver.strip().lower() in {c.lower() for c in request.changers}:
        return (
            "E_SELF_APPROVAL",
            f"{approver} wrote or changed this plan's content and cannot approve it",
        )
    return None


def _check_signed(request: ApprovalRequest, policy: ApprovalSettings, approver: str) -> Refusal:
    if not policy.require_signed:
        return None
    if not request.signature_valid or not request.signer:
        return (
            "E_SIGNATURE_INVALID",
            f"git verify-commit refused {request.commit[:12]}: "
            f"{request.signature_message or 'no valid signature'}",
        )
    if not approver_allowed(request.signer, policy.approvers):
        return ("E_SIGNATURE_INVALID", f"signed by {request.signer}, who is not an approver")
    if request.signer.lower() != approver.lower():
        return (
            "E_SIGNATURE_INVALID",
            f"signed by {request.signer} but the approver identity is {approver}",
        )
    return None


def _check_age(request: ApprovalRequest, policy: ApprovalSettings, approver: str) -> Refusal:
    if policy.max_age is None or request.frozen_since is None:
        return None
    age = max(request.commit_time, request.verified_at or 0) - request.frozen_since
    if age > policy.max_age:
        return (
            "E_PLAN_EXPIRED",
            f"the plan was frozen {age / 3600:.1f} h before its approval was verified; "
            f"approval.max_age is {policy.max_age / 3600:.1f} h",
        )
    return None
