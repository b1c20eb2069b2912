"""Quorum: approvals for one hash collected across commits by distinct people (SPEC §11).

:func:`judge` takes the approval request the history found (the first-parent commit that set
``approved``), the approvals collected before for the same hash (recorded by the controller
in ``approval.approvals``), the signed ``Plan-Approved:`` commits inside a merged branch, and
the plan's :class:`~controller.approval.policy.Need`; it returns a :class:`Verdict`:

- ``start``: the requirements are met (or, with no rule, the one approval is valid);
- ``partial``: the approval counts but more are needed; the controller records
  ``approval: {status: partial, plan_hash, approvals: [{by, at, commit}], missing}`` and sets
  the plan back to ``pending_approval``;
- ``refuse``: the request fails a §5 rule; a refusal about the *version* (not frozen,
  changed, expired) voids everything; a refusal about the *person* (not an approver, not in
  a group the rule needs, self-approval, signature) or about the *decision* (a replay or a
  copy of an approval: nobody's vote) keeps what was collected.

Pure: the live controller, ``plangate check`` and the audit call it with the same facts.
Gate approvals and resumes keep the single-approval rule: they continue a run whose hash the
quorum already approved.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from controller.approval.approvals import (
    ApprovalRequest,
    Decision,
    Transition,
    approver_of,
    verify_approval,
)
from controller.approval.policy import Need, fits_any, person, tally
from controller.settings import ApprovalSettings

TRAILER = "Plan-Approved"
#: Refusals that concern the plan version, not the approver: they void the collected votes.
#: ``E_APPROVAL_REPLAYED`` is not one: a replayed or copied approval is nobody's decision on
#: this version, and refusing it says nothing about the version the votes were given for
#: (round 69: the agent's one copy of another plan's approval reset any quorum at will).
PLAN_LEVEL = frozenset({"E_PLAN_NOT_FROZEN", "E_PLAN_HASH_MISMATCH", "E_PLAN_EXPIRED"})


@dataclass(frozen=True)
class Vote:
    """One counted approval: who, when (the approving commit's time), which commit."""

    by: str
    at: str
    commit: str

    def as_dict(self) -> dict[str, str]:
        return {"by": self.by, "at": self.at, "commit": self.commit}


def votes_from(record: Any, plan_hash: str | None) -> list[Vote]:
    """The votes a controller-written ``approval:`` block holds for ``plan_hash``."""
    if not isinstance(record, dict) or plan_hash is None or record.get("plan_hash") != plan_hash:
        return []
    found = []
    for item in record.get("approvals") or []:
        if isinstance(item, dict) and all(
            isinstance(item.get(k), str) for k in Vote.__annotations__
        ):
            found.append(Vote(item["by"], item["at"], item["commit"]))
    return found


def approvers_of(record: Any) -> list[str]:
    """Who an ``approval:`` block names as having approved, each once: the approval that met
    the policy (``by``) first, then every other counted vote (``approvals``) in vote order; a
    ``partial`` block (no ``by`` yet) its votes so far, the newest last. The one list every
    surface names (the start and outcome commits' ``Approved-By:`` trailers, ``status``'s
    ``approvers``, the posts; round 117, quorum-approvers-not-shown: a two-approval run named
    its last voter alone). A single approval: ``[by]``, as before."""
    if not isinstance(record, dict):
        return []
    by = record.get("by") if record.get("status") != "refused" else None
    names = [by] if isinstance(by, str) and by else []
    for item in record.get("approvals") or []:
        who = item.get("by") if isinstance(item, dict) else None
        if isinstance(who, str) and who and who not in names:
            names.append(who)
    return names


@dataclass(frozen=True)
class Rejected:
    """An approval that does not count, and why (shown by ``check`` and in logs)."""

    by: str
    commit: str
    code: str
    message: str


@dataclass(frozen=True)
class Verdict:
    outcome: Literal["start", "partial", "refuse"]
    #: The ``approval:`` block to commit.
    record: dict[str, Any]
    #: The verdict on the request's own approver.
    decision: Decision
    votes: tuple[Vote, ...] = ()
    missing: str = ""
    rejected: tuple[Rejected, ...] = field(default=())

    @property
    def approver(self) -> str:
        return str(self.record.get("by") or self.decision.approver)


def iso(ts: int | float) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def trailer_value(plan_id: str, plan_hash: str) -> str:
    return f"{plan_id} {plan_hash}"


def trailer_request(
    request: ApprovalRequest,
    commit: str,
    time: int,
    signer: str | None,
    valid: bool,
    message: str,
    *,
    changed: bool = False,
    author_time: int | None = None,
    signer_key: str = "",
) -> ApprovalRequest:
    """A ``Plan-Approved:`` commit as a request of its own: its signer is the approver;
    ``changed``: the commit itself changed the plan's hashed content; ``author_time``: when
    it was written, which must follow the version's birth like any approval's (round 15: a
    trailer of the version's earlier life, or signed before the plan existed, counted)."""
    who = signer or ""
    return replace(
        request,
        commit=commit,
        kind=Transition.APPROVE,
        author_email=who,
        committer_email=who,
        commit_time=time,
        author_time=author_time,
        merge=False,
        replay_of=None,
        other_pause=False,
        changed_in_commit=changed,
        signature_valid=valid,
        signer=signer,
        signature_message=message,
        signer_key=signer_key,
    )


def judge(
    request: ApprovalRequest,
    settings: ApprovalSettings,
    need: Need,
    at: str,
    *,
    collected: Sequence[Vote] = (),
    trailers: Sequence[ApprovalRequest] = (),
    revotes: Mapping[str, tuple[ApprovalRequest, bool]] | None = None,
) -> Verdict:
    """The verdict on one approval request under the policy (see the module docstring).

    ``revotes``: the collected votes' commits as requests (by commit, with whether each is a
    signed ``Plan-Approved:`` commit), each judged again under ``settings``; a collected vote
    without one is dropped (None: trust them, for callers with no repository)."""
    decision = verify_approval(request, settings)
    simple = request.kind is not Transition.APPROVE or (
        need.is_default and not collected and not trailers
    )
    if simple or (not decision.valid and decision.code in PLAN_LEVEL):
        record = decision.record(request, at)
        if not decision.valid:
            return Verdict("refuse", record, decision)
        return Verdict("start", record, decision, (Vote(decision.approver, at, request.commit),))
    signed = settings.model_copy(update={"require_signed": True, "identity": "author"})
    rejected: list[Rejected] = []
    kept: list[Vote] = []
    key_of: dict[str, str] = {request.commit: _key(request)}  # commit -> its signing key
    for vote in collected:
        if revotes is None:
            kept.append(vote)
            continue
        found = revotes.get(vote.commit)
        if found is None:
            message = f"{vote.commit[:12]} cannot be read to judge it again"
            rejected.append(Rejected(vote.by, vote.commit, "E_GIT", message))
            continue
        again, trailer = found
        if trailer and (not again.signature_valid or not again.signer):
            message = f"{vote.commit[:12]} is no longer signed by a known key"
            rejected.append(Rejected(vote.by, vote.commit, "E_SIGNATURE_INVALID", message))
            continue
        verdict = verify_approval(again, signed if trailer else settings)
        if not verdict.valid:
            rejected.append(Rejected(vote.by, vote.commit, verdict.code or "", verdict.message))
        elif not fits_any(verdict.approver, need, settings):
            rejected.append(
                Rejected(vote.by, vote.commit, "E_APPROVER_NOT_ALLOWED", "in no group needed")
            )
        else:
            kept.append(Vote(verdict.approver, vote.at, vote.commit))
            key_of[vote.commit] = _key(again)
    votes = {
        person(v.by, settings.identity_aliases): v for v in reversed(kept)
    }  # the first vote of a person stays
    votes = dict(reversed(list(votes.items())))
    for extra in trailers:
        if not extra.signature_valid or not extra.signer:  # unsigned never counts
            message = f"{extra.commit[:12]} is not signed by a known key: {extra.signature_message}"
            rejected.append(Rejected("?", extra.commit, "E_SIGNATURE_INVALID", message))
            continue
        verdict = verify_approval(extra, signed)
        key_of.setdefault(extra.commit, _key(extra))
        if verdict.valid:
            when = iso(extra.commit_time)
            votes.setdefault(
                person(verdict.approver, settings.identity_aliases),
                Vote(verdict.approver, when, extra.commit),
            )
        else:
            rejected.append(
                Rejected(extra.signer or "?", extra.commit, verdict.code or "", verdict.message)
            )
    if decision.valid and not fits_any(decision.approver, need, settings):
        decision = _outside_groups(decision, need)
    counted, used = _one_per_key(list(votes.values()), key_of, settings, rejected)
    me = person(decision.approver, settings.identity_aliases)
    holder = used.get(key_of[request.commit])
    if decision.valid and holder is not None and holder != me:
        decision = Decision(
            False,
            decision.approver,
            "E_SIGNATURE_INVALID",
            f"{request.commit[:12]} is signed with the key that cast {holder}'s vote: one "
            "signing key counts once, whatever certificates name it",
            decision.signer,
        )
    if decision.valid and me not in {person(v.by, settings.identity_aliases) for v in counted}:
        counted.append(Vote(decision.approver, at, request.commit))
    return _verdict(request, settings, need, decision, counted, rejected, at)


def _key(request: ApprovalRequest) -> str:
    """The key that signed a vote (a certificate's: the certified key), "" if unsigned."""
    if not request.signature_valid or not request.signer_key:
        return ""
    from controller.approval.signers import key_fingerprint

    return key_fingerprint(request.signer_key)


def _one_per_key(
    votes: list[Vote],
    key_of: Mapping[str, str],
    settings: ApprovalSettings,
    rejected: list[Rejected],
) -> tuple[list[Vote], dict[str, str]]:
    """The votes, the first of each signing key only (round 33: two certificates the CA
    issued on one key, for Bob and for Carol, filled two places of a quorum); and which
    person each key voted for."""
    counted: list[Vote] = []
    used: dict[str, str] = {}
    for vote in votes:
        key, who = key_of.get(vote.commit, ""), person(vote.by, settings.identity_aliases)
        if key and used.get(key, who) != who:
            message = (
                f"{vote.commit[:12]} is signed with the key that cast {used[key]}'s vote: one "
                "signing key counts once, whatever certificates name it"
            )
            rejected.append(Rejected(vote.by, vote.commit, "E_SIGNATURE_INVALID", message))
            continue
        if key:
            used[key] = who
        counted.append(vote)
    return counted, used


def _outside_groups(decision: Decision, need: Need) -> Decision:
    groups = sorted({r.group for r in need.require if r.group})
    return Decision(
        False,
        decision.approver,
        "E_APPROVER_NOT_ALLOWED",
        f"{decision.approver} is an approver but in none of the groups this plan needs "
        f"({', '.join(groups)}: {need.describe()})",
        decision.signer,
    )


def _verdict(
    request: ApprovalRequest,
    settings: ApprovalSettings,
    need: Need,
    decision: Decision,
    votes: list[Vote],
    rejected: list[Rejected],
    at: str,
) -> Verdict:
    result = tally([v.by for v in votes], need, settings)
    listed = [v.as_dict() for v in votes]
    if result.met:
        record = {
            "status": "approved",
            "by": decision.approver if decision.valid else votes[-1].by,
            "at": at,
            "commit": request.commit,
            "plan_hash": request.current_hash,
            "signature": decision.signer if decision.valid else None,
            "approvals": listed,
        }
        return Verdict("start", record, decision, tuple(votes), "", tuple(rejected))
    base: dict[str, Any] = {"status": "partial", "plan_hash": request.current_hash}
    if not decision.valid:
        base = {
            "status": "refused",
            "code": decision.code,
            "message": decision.message,
            "by": decision.approver,
            "commit": request.commit,
            "plan_hash": request.current_hash,
        }
    record = {**base, "approvals": listed, "missing": result.missing}
    outcome: Literal["partial", "refuse"] = "partial" if decision.valid else "refuse"
    return Verdict(outcome, record, decision, tuple(votes), result.missing, tuple(rejected))


def approver_identity(request: ApprovalRequest, settings: ApprovalSettings) -> str:
    return approver_of(request, settings)
