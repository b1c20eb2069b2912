"""``status`` says why a plan is where it is from its effective status, not from a status a
human wrote into the file (which the controller ignored)."""

from __future__ import annotations

from controller.plan import summary

INVALID = {
    "plan": {"name": "n", "task": "t", "status": "approved"},  # set by hand: ignored
    "validation": {"errors": [{"code": "E_SCHEMA_INVALID", "message": "a gated fallback step"}]},
}


def test_an_invalid_plan_set_approved_by_hand_still_says_why_it_is_invalid() -> None:
    assert summary.reason(INVALID) is None  # the file alone claims approved
    assert summary.reason(INVALID, "invalid") == "E_SCHEMA_INVALID: a gated fallback step"
