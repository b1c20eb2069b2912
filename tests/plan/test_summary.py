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


def _failed(*steps: dict, error: dict | None = None) -> dict:  # type: ignore[type-arg]
    execution: dict = {"status": "failed", "actions": list(steps)}  # type: ignore[type-arg]
    if error is not None:
        execution["error"] = error
    return {"plan": {"status": "failed"}, "execution": execution}


def _step(key: object, status: str, code: str | None = None) -> dict:  # type: ignore[type-arg]
    step: dict = {"id": key, "status": status}  # type: ignore[type-arg]
    if code is not None:
        step["error"] = {"code": code, "message": f"{key} said {code}"}
    return step


def test_a_run_ended_in_a_fallback_step_is_said_to_have_ended_there() -> None:
    """Round 128: action 1 failed, its fallback step 1.1 then in doubt (or failed with its
    own code): the outcome commit names 1.1's error, and so does the reason."""
    data = _failed(
        _step(1, "failed", "E_TOOL_FAILED"),
        _step("1.1", "succeeded"),
        _step("1.2", "in_doubt", "E_ACTION_IN_DOUBT"),
        _step(2, "pending"),
    )
    assert summary.reason(data) == (
        "fallback step 1.2 of action 1: E_ACTION_IN_DOUBT: 1.2 said E_ACTION_IN_DOUBT"
    )
    assert summary.ended_by(data["execution"]) == ("1.2", data["execution"]["actions"][2]["error"])


def test_a_nested_step_and_its_fallback_and_the_parents_fallback() -> None:
    nested = _failed(
        _step(3, "failed", "E_TOOL_FAILED"),
        _step("3/1", "failed", "E_TOOL_FAILED"),
        _step("3/1.1", "failed", "E_OUTPUT_MISSING"),
    )
    assert summary.reason(nested) == (
        "fallback step 3/1.1 of action 3/1: E_OUTPUT_MISSING: 3/1.1 said E_OUTPUT_MISSING"
    )
    parent = _failed(
        _step(3, "failed", "E_TOOL_FAILED"),
        _step("3/1", "failed", "E_TOOL_FAILED"),
        _step("3.1", "failed", "E_GUARD_FAILED"),
    )
    assert str(summary.reason(parent)).startswith("fallback step 3.1 of action 3: E_GUARD")


def test_an_action_its_fallback_recovered_is_passed_over() -> None:
    """A nested step that failed under an action its fallback recovered (``skipped``) did not
    end the run: the later action that failed did."""
    data = _failed(
        _step(1, "skipped", "E_TOOL_FAILED"),
        _step("1/1", "failed", "E_TOOL_FAILED"),
        _step("1.1", "succeeded"),
        _step(2, "failed", "E_VERIFY_FAILED"),
    )
    assert summary.reason(data) == "action 2: E_VERIFY_FAILED: 2 said E_VERIFY_FAILED"


def test_the_runs_own_failure_is_its_reason() -> None:
    """``execution.error`` is written only when the run failed as a whole (a lost journal):
    that is what its outcome commit said, whatever an action recorded before."""
    data = _failed(
        _step(1, "failed", "E_TOOL_FAILED"),
        error={"code": "E_ACTION_IN_DOUBT", "message": "the journal of this run was lost"},
    )
    assert summary.reason(data) == "E_ACTION_IN_DOUBT: the journal of this run was lost"
