"""A check's failure as the record gives it: the author's expected value as written, the
check's result and a check tool's error redacted (round 65)."""

from __future__ import annotations

from typing import Any

from controller.errors import PlangateError
from controller.execution import checks
from controller.execution.secrets import Redactor
from controller.execution.tools import ToolError
from controller.plan.schema import Precondition

SECRET = "r65-unit-s3cr3t-q8"
WRONG = SECRET[:-1] + "z"


def _failed(guess: str, result: Any) -> checks.CheckOutcome:
    pre = Precondition.model_validate(
        {"tool": "chk", "expect": [{"path": "$.ok", "equals": guess}, {"path": "$.n", "in": [1]}]}
    )
    return checks.precondition(0, pre, lambda params: params, lambda *_: result)


def test_a_failed_checks_record_quotes_the_expected_value_as_written() -> None:
    redact = Redactor([SECRET]).text
    for guess in (SECRET, WRONG):
        error = _failed(guess, {"ok": True, "n": 2}).as_error("plan:")
        assert error.recorded(redact) == (
            f'plan: precondition 1 does not hold: $.ok is true (expected equals "{guess}"); '
            "$.n is 2 (expected in [1])"
        )


def test_the_checks_result_stays_the_controllers_material() -> None:
    redact = Redactor([SECRET]).text
    # the result as the check reads it (masked), and a value the redactor still spots in it
    found = _failed(WRONG, {"ok": f"x{SECRET}x", "n": 1})
    assert found.quotes == ("$.ok", f'"{WRONG}"', "$.n", "[1]")
    recorded = found.as_error("plan:").recorded(redact)
    assert SECRET not in recorded and f'"{WRONG}"' in recorded


def test_a_check_tools_error_is_redacted_whole() -> None:
    redact = Redactor([SECRET]).text

    def fails(*_: Any) -> Any:
        raise ToolError(f'stderr: "{SECRET}"')

    pre = Precondition.model_validate({"tool": "chk", "expect": {"path": "$.ok", "equals": SECRET}})
    found = checks.precondition(0, pre, lambda params: params, fails)
    error = found.as_error("plan:")
    assert isinstance(error, PlangateError) and error.quoted() == ()
    assert SECRET not in error.recorded(redact)  # the tool's text, though it equals the quote
