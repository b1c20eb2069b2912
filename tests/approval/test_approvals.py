"""The pure approval rules (SPEC §5) and the human transition table (SPEC §4)."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.approval.approvals import (
    ApprovalRequest,
    Transition,
    approver_allowed,
    classify,
    verify_approval,
)
from controller.plan.schema import STATUSES
from controller.settings import ApprovalSettings

H = "sha256:" + "a" * 64
POLICY = ApprovalSettings(approvers=["alice@example.com", "*@ops.example.com"])
GOOD = ApprovalRequest(
    plan_id="plans/x",
    commit="c" * 40,
    kind=Transition.APPROVE,
    author_email="alice@example.com",
    committer_email="web-flow@github.com",
    commit_time=1_000_000,
    problems=(),
    current_hash=H,
    frozen_hash=H,
    changed_in_commit=False,
    changers=frozenset({"agent@example.com"}),
    frozen_since=999_000,
)


def code(request: ApprovalRequest, policy: ApprovalSettings = POLICY) -> str | None:
    return verify_approval(request, policy).code


def test_valid_approval() -> None:
    decision = verify_approval(GOOD, POLICY)
    assert decision.valid and decision.approver == "alice@example.com"


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"frozen_hash": None}, "E_PLAN_NOT_FROZEN"),
        ({"problems": ("E_TOOL_UNKNOWN",)}, "E_PLAN_NOT_FROZEN"),
        ({"current_hash": "sha256:" + "b" * 64}, "E_PLAN_HASH_MISMATCH"),
        ({"changed_in_commit": True}, "E_PLAN_HASH_MISMATCH"),
        ({"voided_by": "d" * 40}, "E_PLAN_HASH_MISMATCH"),
        ({"author_email": "mallory@example.com"}, "E_APPROVER_NOT_ALLOWED"),
        ({"changers": frozenset({"Alice@Example.com"})}, "E_SELF_APPROVAL"),
        ({"held": True}, "E_PLAN_AMBIGUOUS"),  # set while a twin held the plan (round 83)
        ({"held": True, "kind": Transition.GATE, "approved_hash": H}, "E_PLAN_AMBIGUOUS"),
    ],
)
def test_each_rule_refuses_with_its_code(change: dict[str, object], expected: str) -> None:
    assert code(dataclasses.replace(GOOD, **change)) == expected  # type: ignore[arg-type]


def test_an_approval_made_while_held_is_refused_by_its_own_author() -> None:
    """Round 83: the refusal of a status set while the plan was held names its maker."""
    decision = verify_approval(dataclasses.replace(GOOD, held=True), POLICY)
    assert not decision.valid and decision.code == "E_PLAN_AMBIGUOUS"
    assert decision.approver == "alice@example.com"


def test_glob_patterns_and_empty_list() -> None:
    assert approver_allowed("bob@ops.example.com", POLICY.approvers)
    assert not approver_allowed("bob@ops.example.com.evil", POLICY.approvers)
    assert not approver_allowed("alice@example.com", [])


def test_committer_identity() -> None:
    policy = ApprovalSettings(approvers=["alice@example.com"], identity="committer")
    assert code(GOOD, policy) == "E_APPROVER_NOT_ALLOWED"  # the forge committed it
    assert code(dataclasses.replace(GOOD, committer_email="alice@example.com"), policy) is None


def test_signatures() -> None:
    policy = ApprovalSettings(approvers=["alice@example.com"], require_signed=True)
    assert code(GOOD, policy) == "E_SIGNATURE_INVALID"
    signed = dataclasses.replace(GOOD, signature_valid=True, signer="alice@example.com")
    assert code(signed, policy) is None
    other = dataclasses.replace(GOOD, signature_valid=True, signer="bob@example.com")
    assert code(other, policy) == "E_SIGNATURE_INVALID"


def test_max_age() -> None:
    policy = ApprovalSettings(approvers=["alice@example.com"], max_age="1h")  # type: ignore[arg-type]
    assert code(GOOD, policy) is None or code(GOOD, policy) == "E_PLAN_EXPIRED"
    old = dataclasses.replace(GOOD, frozen_since=GOOD.commit_time - 7200)
    assert code(old, policy) == "E_PLAN_EXPIRED"
    fresh = dataclasses.replace(GOOD, frozen_since=GOOD.commit_time - 60)
    assert code(fresh, policy) is None


def test_gate_and_resume_need_the_same_hash() -> None:
    gate = dataclasses.replace(GOOD, kind=Transition.GATE, approved_hash="sha256:" + "e" * 64)
    assert code(gate) == "E_PLAN_HASH_MISMATCH"
    assert code(dataclasses.replace(gate, approved_hash=H)) is None


def test_transition_table() -> None:
    assert classify("pending_approval", "approved") is Transition.APPROVE
    assert classify(None, "approved") is Transition.APPROVE
    assert classify("awaiting_approval", "approved") is Transition.GATE
    assert classify("failed", "approved") is Transition.RESUME
    assert classify("executing", "aborted") is Transition.ABORT
    assert classify("invalid", "pending_approval") is Transition.LEGAL
    assert classify("rejected", "approved") is Transition.ILLEGAL
    # a draft's withdrawal counts (round 119, draft-rejection-ignored); its abort does not
    assert classify("draft", "rejected") is Transition.LEGAL
    assert classify("draft", "aborted") is Transition.ILLEGAL


@given(st.sampled_from([None, *STATUSES]), st.sampled_from(STATUSES))
def test_no_human_commit_can_reach_a_controller_status(old: str | None, new: str) -> None:
    """Nothing a plan author writes makes a plan count as running or done."""
    if new in ("executing", "awaiting_approval", "completed", "failed", "invalid"):
        assert classify(old, new) in (Transition.ILLEGAL, Transition.NONE)
