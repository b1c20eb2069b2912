"""What the controller would say about an approve, reject or abort, before it is committed.

``plangate approve/reject/abort`` commit a status change that the controller judges later
(SPEC §4, §5). With the controller's config at hand the command can tell the user first:
not an allowed approver, you wrote this plan (E_SELF_APPROVAL), not an approver or author
(a reject or abort from anyone else is ignored), already approved, nothing to abort. Pure
rules over facts the command gathers; the same approver test as the controller's
(:func:`controller.approval.approvals.approver_allowed`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from controller.approval.approvals import approver_allowed, normalize_identity
from controller.settings import ApprovalSettings

#: status a human command sets -> statuses it may be set from (SPEC §4)
ALLOWED_FROM = {
    "approved": ("pending_approval", "awaiting_approval", "failed"),
    # an approval the controller has not acted on yet can still be withdrawn (it lapses);
    # a draft too (round 119, draft-rejection-ignored: the controller counts it)
    "rejected": ("draft", "pending_approval", "approved"),
    "aborted": ("approved", "executing", "awaiting_approval", "failed"),
}
VERBS = {"approved": "approve", "rejected": "reject", "aborted": "abort"}
FINAL = ("rejected", "completed", "aborted")


@dataclass(frozen=True)
class Verdict:
    """Why the controller would refuse or ignore the command."""

    code: str
    message: str
    remedy: str


def transition_problem(plan: str, status: str | None, wanted: str) -> Verdict | None:
    """The status the plan is in does not allow ``wanted`` (no config needed)."""
    if status in ALLOWED_FROM[wanted]:
        return None
    verb = VERBS[wanted]
    if status == wanted == "approved":
        return Verdict(
            "E_ILLEGAL_TRANSITION",
            f"{plan} is already approved; the controller has not verified it yet",
            "push the approval commit if the controller watches a remote, then watch "
            "`plangate status`",
        )
    if status in FINAL:
        return Verdict(
            "E_ILLEGAL_TRANSITION",
            f"{plan} is {status}, which is final; {verb} cannot change it",
            "to do this work again, change the plan (its hash) and submit it as "
            "pending_approval, or write a new plan",
        )
    if wanted == "aborted":
        return Verdict(
            "E_ILLEGAL_TRANSITION",
            f"nothing to abort: {plan} is {status}, not approved, executing, paused or failed",
            "to withdraw a plan that has not started, reject it (`plangate reject`) or set "
            "status: draft",
        )
    allowed = " or ".join(ALLOWED_FROM[wanted])
    return Verdict(
        "E_ILLEGAL_TRANSITION",
        f"{plan} is {status}; {verb} works on a plan that is {allowed}",
        "check `plangate status` for where the plan is",
    )


def policy_problem(
    plan: str,
    wanted: str,
    user: str,
    authors: Iterable[str],
    policy: ApprovalSettings,
) -> Verdict | None:
    """What the controller would refuse (approve) or ignore (reject, abort) from ``user``."""
    is_author = _same(user, authors)
    allowed = approver_allowed(user, policy.approvers, policy.identity_aliases)
    listed = ", ".join(policy.approvers) or "nobody (approval.approvers is empty)"
    if wanted == "approved":
        if not allowed:
            return Verdict(
                "E_APPROVER_NOT_ALLOWED",
                f"{user} is not an approver (allowed: {listed}); the controller would refuse "
                "this approval",
                "ask an allowed approver to approve it, or use --force to commit anyway",
            )
        if is_author and not policy.allow_self_approval:
            return Verdict(
                "E_SELF_APPROVAL",
                f"{user} wrote or changed {plan}'s content and cannot approve it; the "
                "controller would refuse this approval",
                "ask another approver to approve it, or use --force to commit anyway",
            )
        return None
    if not allowed and not is_author:
        return Verdict(
            "E_APPROVER_NOT_ALLOWED",
            f"{user} is neither an approver (allowed: {listed}) nor an author of {plan}; the "
            f"controller would ignore this {VERBS[wanted]}",
            "ask an approver or the plan's author, or use --force to commit anyway",
        )
    return None


def _same(user: str, people: Iterable[str]) -> bool:
    key = normalize_identity(user)
    return any(key == normalize_identity(p) for p in people)
